//! The start-up guard: application tables without quotebot's migration
//! history are a schema some other tool made; migrating over it could
//! clash or lose data, so the start aborts and says what to do.

use keel_platform::db::Db;
use keel_platform::sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement, Value};

use super::{COMPONENT, TABLES};

/// The message every such abort begins with (the documented contract).
pub const ABORT: &str =
    "Migration aborted: Existing schema without migration history: baseline required";

#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error(
        "{ABORT} (found {tables} but no quotebot migration history). If the schema is exactly migration 0000, run `keel quotebot db baseline`; if it is older or drifted, `keel quotebot db reconcile`."
    )]
    Unrecorded { tables: String },
    #[error("database error: {0}")]
    Db(#[from] DbErr),
}

/// Which of the application tables exist in the current schema.
pub async fn present_tables(db: &Db) -> Result<Vec<String>, DbErr> {
    let rows = db
        .read()
        .query_all_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT table_name::text AS name FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_name = ANY($1) ORDER BY 1",
            [Value::from(
                TABLES.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>(),
            )],
        ))
        .await?;
    rows.iter().map(|r| r.try_get("", "name")).collect()
}

/// How many quotebot migrations are recorded (0 when there is no history
/// table at all).
pub async fn recorded(db: &Db) -> Result<i64, DbErr> {
    let exists = db
        .read()
        .query_one_raw(Statement::from_string(
            DbBackend::Postgres,
            "SELECT to_regclass('keel_migrations') IS NOT NULL AS e",
        ))
        .await?
        .map(|r| r.try_get::<bool>("", "e"))
        .transpose()?
        .unwrap_or(false);
    if !exists {
        return Ok(0);
    }
    Ok(db
        .read()
        .query_one_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT count(*) AS n FROM keel_migrations WHERE component = $1",
            [Value::from(COMPONENT)],
        ))
        .await?
        .map(|r| r.try_get::<i64>("", "n"))
        .transpose()?
        .unwrap_or(0))
}

/// Refuses to migrate over application tables with no history.
pub async fn check(db: &Db) -> Result<(), GuardError> {
    let tables = present_tables(db).await?;
    if tables.is_empty() || recorded(db).await? > 0 {
        return Ok(());
    }
    Err(GuardError::Unrecorded {
        tables: tables
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(", "),
    })
}
