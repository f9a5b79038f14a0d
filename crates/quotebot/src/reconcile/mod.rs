//! `keel quotebot db reconcile [--confirm]`: brings a database made by an
//! earlier, unmigrated version of the bot (enums stored as text,
//! timestamps as text, text ids, missing columns) to migration 0000's
//! shape, keeping every row, and records 0000 as applied.
//!
//! Without `--confirm` it prints a checklist (what it found, row counts,
//! what it will change, take a backup, stop the bot) and changes nothing.
//! With it, every row is converted first; a value that cannot be mapped,
//! or a duplicated `guildId`, aborts with no change, naming table, row and
//! column. Then, in one transaction: the four tables (and the enum types)
//! are dropped, 0000 is run, the rows go back in, 0000 is recorded.
//! Refused for a database with migration history or without `Guild`.

mod convert;
mod legacy;

use std::collections::HashMap;
use std::fmt::Write;

use keel_platform::db::Db;
use keel_platform::migrate;
use keel_platform::sea_orm::{
    ConnectionTrait, DatabaseTransaction, DbBackend, Statement, TransactionTrait, Value,
};

use crate::schema::{self, guard, shape};
use convert::{Cell, Column, TABLES};
use legacy::Table;

/// One table's rows, converted, ready to insert.
struct Rebuilt {
    table: &'static str,
    columns: &'static [Column],
    rows: Vec<Vec<Cell>>,
}

pub async fn run(db: &Db, confirm: bool) -> anyhow::Result<String> {
    if guard::recorded(db).await? > 0 {
        anyhow::bail!(
            "reconcile refused: this database has quotebot migration history, so migrations manage it; nothing to reconcile"
        );
    }
    let schema_name = shape::current_schema(db.read()).await?;
    let present = guard::present_tables(db).await?;
    if !present.iter().any(|t| t == "Guild") {
        anyhow::bail!(
            "reconcile refused: schema \"{schema_name}\" has no \"Guild\" table, so it is not a quotebot database (start the bot to migrate a fresh one)"
        );
    }
    // Read and rebuilt in one transaction; with --confirm the tables are
    // locked first, so a row a running bot writes meanwhile is either in
    // what is read or waits for the rebuild, never lost between the two.
    let txn = db.write().begin().await?;
    if confirm {
        lock(&txn, &present).await?;
    }
    let mut found = HashMap::new();
    for t in &present {
        found.insert(t.clone(), legacy::read(&txn, t).await?);
    }
    let rebuilt = convert_all(&found)?;
    if !confirm {
        return Ok(checklist(&schema_name, &found));
    }
    rebuild(&txn, &rebuilt).await?;
    txn.commit().await?;
    let counts: Vec<String> = rebuilt
        .iter()
        .map(|r| format!("{} {}", r.table, r.rows.len()))
        .collect();
    Ok(format!(
        "reconciled schema \"{schema_name}\" to migration 0000 and recorded it as applied; rows kept: {}",
        counts.join(", ")
    ))
}

/// How long reconcile waits for a writer to let go of a table.
const LOCK_TIMEOUT: &str = "60s";

/// Takes the legacy tables from every other session until the rebuild
/// commits (waiting up to [`LOCK_TIMEOUT`] for writers in flight).
async fn lock(txn: &DatabaseTransaction, tables: &[String]) -> anyhow::Result<()> {
    txn.execute_unprepared(&format!("SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
        .await?;
    let list = tables
        .iter()
        .map(|t| format!("\"{t}\""))
        .collect::<Vec<_>>()
        .join(", ");
    txn.execute_unprepared(&format!("LOCK TABLE {list} IN ACCESS EXCLUSIVE MODE"))
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "reconcile aborted, nothing changed: the tables stayed in use for {LOCK_TIMEOUT} (stop every bot process first): {e}"
            )
        })?;
    Ok(())
}

/// Converts every row of every table, or names the first value that
/// cannot be mapped.
fn convert_all(found: &HashMap<String, Table>) -> anyhow::Result<Vec<Rebuilt>> {
    let mut out = Vec::new();
    for (table, columns) in TABLES {
        let Some(legacy) = found.get(table) else {
            out.push(Rebuilt {
                table,
                columns,
                rows: Vec::new(),
            });
            continue;
        };
        let mut rows = Vec::with_capacity(legacy.rows.len());
        for (n, row) in legacy.rows.iter().enumerate() {
            let mut cells = Vec::with_capacity(columns.len());
            for c in columns {
                let value = legacy.value(row, c.name);
                let cell = convert::convert(c, value).map_err(|why| {
                    anyhow::anyhow!(
                        "reconcile aborted, nothing changed: table \"{table}\", row {} ({}), column \"{}\": {why}",
                        n + 1,
                        legacy.row_label(row),
                        c.name
                    )
                })?;
                cells.push(cell);
            }
            rows.push(cells);
        }
        if table == "Guild" {
            duplicates(legacy, &rows)?;
        }
        out.push(Rebuilt {
            table,
            columns,
            rows,
        });
    }
    Ok(out)
}

/// `guildId` is unique in the current shape.
fn duplicates(legacy: &Table, rows: &[Vec<Cell>]) -> anyhow::Result<()> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (n, row) in rows.iter().enumerate() {
        let Some(Cell::Text(id)) = row.get(1) else {
            continue;
        };
        if let Some(first) = seen.insert(id.as_str(), n) {
            anyhow::bail!(
                "reconcile aborted, nothing changed: table \"Guild\", rows {} and {} ({}), column \"guildId\": duplicate value \"{id}\"",
                first + 1,
                n + 1,
                legacy.row_label(&legacy.rows[n])
            );
        }
    }
    Ok(())
}

async fn rebuild(txn: &DatabaseTransaction, rebuilt: &[Rebuilt]) -> anyhow::Result<()> {
    txn.execute_unprepared(
        r#"DROP TABLE IF EXISTS "Guild", "MotivationQuote", "SuggestionQuote", "PlatformActivity" CASCADE"#,
    )
    .await?;
    txn.execute_unprepared(
        r#"DROP TYPE IF EXISTS "MotivationFrequency", "SuggestionStatus", "ActivityType" CASCADE"#,
    )
    .await?;
    for sql in schema::INITIAL {
        txn.execute_unprepared(sql).await?;
    }
    for r in rebuilt {
        for (n, row) in r.rows.iter().enumerate() {
            insert(txn, r, row).await.map_err(|e| {
                anyhow::anyhow!(
                    "reconcile aborted and rolled back: table \"{}\", row {}: {e}",
                    r.table,
                    n + 1
                )
            })?;
        }
    }
    migrate::mark_applied_in(txn, &schema::MIGRATIONS, 0).await?;
    Ok(())
}

async fn insert(
    txn: &DatabaseTransaction,
    r: &Rebuilt,
    row: &[Cell],
) -> Result<(), keel_platform::sea_orm::DbErr> {
    let mut names = Vec::new();
    let mut values = Vec::new();
    let mut params: Vec<Value> = Vec::new();
    for (c, cell) in r.columns.iter().zip(row) {
        names.push(format!("\"{}\"", c.name));
        values.push(match cell {
            Cell::Default => "DEFAULT".to_owned(),
            Cell::Null => "NULL".to_owned(),
            Cell::Text(t) => {
                params.push(Value::from(t.clone()));
                format!("${}{}", params.len(), c.kind.cast())
            }
        });
    }
    let sql = format!(
        "INSERT INTO \"{}\" ({}) VALUES ({})",
        r.table,
        names.join(", "),
        values.join(", ")
    );
    txn.execute_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        params,
    ))
    .await
    .map(|_| ())
}

/// What reconcile found and will do, and what to do first.
fn checklist(schema_name: &str, found: &HashMap<String, Table>) -> String {
    let mut s = format!(
        "quotebot reconcile: schema \"{schema_name}\" has quotebot tables but no migration history.\n\nFound, and what --confirm will do:\n"
    );
    for (table, columns) in TABLES {
        let Some(legacy) = found.get(table) else {
            let _ = writeln!(s, "- {table}: missing; will be created empty");
            continue;
        };
        let _ = writeln!(
            s,
            "- {table}: {} rows; rebuilt in the current shape, every row kept",
            legacy.rows.len()
        );
        for line in legacy.changes(columns) {
            let _ = writeln!(s, "    {line}");
        }
    }
    s.push_str(
        "\nEvery value is converted before anything changes; a value that cannot be mapped or a \
         duplicated guildId aborts with no change. The rebuild is one transaction, and records \
         migration 0000 as applied.\n\nBefore running it:\n\
         [ ] take a backup: pg_dump \"$DATABASE_URL\" > quotebot-before-reconcile.sql\n\
         [ ] stop the bot (every process: it must not write during the rebuild)\n\
         [ ] then run: keel quotebot db reconcile --confirm\n\
         Nothing was changed.",
    );
    s
}
