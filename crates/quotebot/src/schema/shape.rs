//! A schema's shape, as PostgreSQL describes it: the application tables'
//! columns (type, nullability, default), the enums they use and their
//! indexes, as comparable lines. `db baseline` compares the live schema
//! with migration 0000 applied to a scratch schema (then rolled back), so
//! "exactly 0000" means exactly what the migration makes.

use keel_platform::db::Db;
use keel_platform::sea_orm::{
    ConnectionTrait, DatabaseTransaction, DbBackend, DbErr, Statement, TransactionTrait, Value,
};

use super::{INITIAL, TABLES};

/// The enums 0000 defines.
const ENUMS: [&str; 3] = ["MotivationFrequency", "SuggestionStatus", "ActivityType"];

fn tables() -> Value {
    Value::from(TABLES.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>())
}

async fn lines<C: ConnectionTrait>(
    conn: &C,
    sql: &str,
    schema: &str,
) -> Result<Vec<String>, DbErr> {
    let rows = conn
        .query_all_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            sql,
            [Value::from(schema), tables()],
        ))
        .await?;
    rows.iter()
        .map(|r| r.try_get::<String>("", "line"))
        .collect()
}

/// The shape of `schema`, one line per fact, sorted.
pub async fn of<C: ConnectionTrait>(conn: &C, schema: &str) -> Result<Vec<String>, DbErr> {
    let mut out = lines(
        conn,
        "SELECT format('column %s.%s %s%s %s default %s', table_name, column_name, udt_name,
                  coalesce('(' || datetime_precision || ')', ''),
                  CASE WHEN is_nullable = 'YES' THEN 'NULL' ELSE 'NOT NULL' END,
                  coalesce(column_default, 'none')) AS line
           FROM information_schema.columns
          WHERE table_schema = $1 AND table_name = ANY($2)",
        schema,
    )
    .await?;
    out.extend(
        lines(
            conn,
            "SELECT format('index %s.%s %s', tablename, indexname,
                      replace(replace(indexdef, 'ON ' || quote_ident($1) || '.', 'ON '), 'ON ' || $1 || '.', 'ON '))
                      AS line
               FROM pg_indexes WHERE schemaname = $1 AND tablename = ANY($2)",
            schema,
        )
        .await?,
    );
    let enums = conn
        .query_all_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT format('enum %s: %s', t.typname, string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder)) AS line
               FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
               JOIN pg_namespace n ON n.oid = t.typnamespace
              WHERE n.nspname = $1 AND t.typname = ANY($2)
              GROUP BY t.typname",
            [
                Value::from(schema),
                Value::from(ENUMS.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>()),
            ],
        ))
        .await?;
    for r in &enums {
        out.push(r.try_get::<String>("", "line")?);
    }
    out.sort();
    Ok(out)
}

pub async fn current_schema<C: ConnectionTrait>(conn: &C) -> Result<String, DbErr> {
    conn.query_one_raw(Statement::from_string(
        DbBackend::Postgres,
        "SELECT current_schema()::text AS s",
    ))
    .await?
    .map(|r| r.try_get("", "s"))
    .transpose()?
    .ok_or_else(|| DbErr::Custom("no current schema".to_owned()))
}

/// What migration 0000 makes, measured in a scratch schema that is rolled
/// back.
pub async fn expected(db: &Db) -> Result<Vec<String>, DbErr> {
    let txn: DatabaseTransaction = db.write().begin().await?;
    let scratch = format!("quotebot_expected_{}", std::process::id());
    txn.execute_unprepared(&format!("CREATE SCHEMA \"{scratch}\""))
        .await?;
    txn.execute_unprepared(&format!("SET LOCAL search_path TO \"{scratch}\""))
        .await?;
    for sql in INITIAL {
        txn.execute_unprepared(sql).await?;
    }
    let shape = of(&txn, &scratch).await;
    txn.rollback().await?;
    shape
}

/// The live schema's differences from `expected`: what is missing, what is
/// not expected.
pub fn diff(live: &[String], expected: &[String]) -> Vec<String> {
    let mut out: Vec<String> = expected
        .iter()
        .filter(|l| !live.contains(l))
        .map(|l| format!("missing:    {l}"))
        .collect();
    out.extend(
        live.iter()
            .filter(|l| !expected.contains(l))
            .map(|l| format!("unexpected: {l}")),
    );
    out
}
