//! Every row of every table of a database, as text: what a test scans for
//! a value that must be gone (a deleted user's id, address and name).

use keel_platform::db::Db;
use keel_platform::sea_orm::{ConnectionTrait, Statement};

/// `(table, row)` for every row of every table, each row written as JSON
/// text (SQLite: every column `quote`d; PostgreSQL: `row_to_json`).
pub async fn every_row(db: &Db) -> Vec<(String, String)> {
    let conn = db.write();
    let backend = conn.get_database_backend();
    let tables_sql = if db.is_postgres() {
        "SELECT table_name AS name FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
    } else {
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    };
    let tables = conn
        .query_all_raw(Statement::from_string(backend, tables_sql))
        .await
        .unwrap_or_else(|e| panic!("listing tables: {e}"));
    let mut rows = Vec::new();
    for t in tables {
        let table: String = t.try_get("", "name").unwrap_or_default();
        let sql = if db.is_postgres() {
            format!("SELECT row_to_json(t)::text AS r FROM \"{table}\" t")
        } else {
            sqlite_row_sql(db, &table).await
        };
        let found = conn
            .query_all_raw(Statement::from_string(backend, sql))
            .await
            .unwrap_or_else(|e| panic!("reading {table}: {e}"));
        for r in found {
            let text: String = r.try_get("", "r").unwrap_or_default();
            rows.push((table.clone(), text));
        }
    }
    rows
}

async fn sqlite_row_sql(db: &Db, table: &str) -> String {
    let conn = db.write();
    let cols = conn
        .query_all_raw(Statement::from_string(
            conn.get_database_backend(),
            format!("SELECT name FROM pragma_table_info('{table}')"),
        ))
        .await
        .unwrap_or_else(|e| panic!("columns of {table}: {e}"));
    let pairs: Vec<String> = cols
        .iter()
        .map(|c| {
            let name: String = c.try_get("", "name").unwrap_or_default();
            format!("'{name}', quote(\"{name}\")")
        })
        .collect();
    format!(
        "SELECT json_object({}) AS r FROM \"{table}\"",
        pairs.join(", ")
    )
}
