//! Every row of every table of a database, every file of a directory and
//! every Redis key of a prefix, as text: what a test scans for a value that
//! must be gone (a deleted user's id, address and name).

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

/// `(path, bytes)` of every file under `dir`, at any depth.
pub fn every_file(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                todo.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push((path, bytes));
            }
        }
    }
    out
}

/// The files of `files` whose bytes hold `needle` (ASCII, any case).
pub fn files_holding<'a>(
    files: &'a [(std::path::PathBuf, Vec<u8>)],
    needle: &str,
) -> Vec<&'a std::path::Path> {
    let needle = needle.to_ascii_lowercase().into_bytes();
    files
        .iter()
        .filter(|(_, bytes)| {
            bytes
                .windows(needle.len())
                .any(|w| w.eq_ignore_ascii_case(&needle))
        })
        .map(|(p, _)| p.as_path())
        .collect()
}

/// Every key in the test Redis that starts with `prefix`.
pub async fn redis_keys(prefix: &str) -> Vec<String> {
    let client = redis::Client::open(crate::redis_url()).expect("the test Redis URL");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect to the test Redis");
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut conn)
        .await
        .expect("KEYS");
    keys.sort();
    keys
}
