//! Where the relational data lives, and how keel connects to it.

use std::path::Path;
use std::time::Duration;

use super::{ConfigError, Secret, Source};

const DATABASE_URL: &str = "DATABASE_URL";
const DB_ACQUIRE_TIMEOUT_SECS: &str = "KEEL_DB_ACQUIRE_TIMEOUT_SECS";
const DB_IDLE_SECS: &str = "KEEL_DB_IDLE_SECS";
const DB_MAX_CONNECTIONS: &str = "KEEL_DB_MAX_CONNECTIONS";
const DB_MIN_CONNECTIONS: &str = "KEEL_DB_MIN_CONNECTIONS";
const DB_STATEMENT_TIMEOUT_SECS: &str = "KEEL_DB_STATEMENT_TIMEOUT_SECS";
const PG_SHORT_READS: &str = "KEEL_PG_SHORT_READS";
const SQLITE_BUSY_TIMEOUT_MS: &str = "KEEL_SQLITE_BUSY_TIMEOUT_MS";
const SQLITE_INLINE_READS: &str = "KEEL_SQLITE_INLINE_READS";

/// Where the relational data lives.
#[derive(Debug, Clone)]
pub enum DatabaseUrl {
    Sqlite(String),
    Postgres(Secret),
}

impl DatabaseUrl {
    pub fn is_postgres(&self) -> bool {
        matches!(self, Self::Postgres(_))
    }
}

#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    pub url: DatabaseUrl,
    pub max_connections: u32,
    pub min_connections: u32,
    pub acquire_timeout: Duration,
    /// A pooled connection idle this long is closed (down to
    /// `min_connections`).
    pub idle_timeout: Duration,
    pub sqlite_busy_timeout: Duration,
    /// Short SQLite reads on the calling thread (`db::inline`).
    pub sqlite_inline_reads: bool,
    /// Short PostgreSQL reads on connections outside the pool
    /// (`db::short_pg`), half of `max_connections`.
    pub pg_short_reads: bool,
    /// PostgreSQL's `statement_timeout` for keel's connections (zero: none;
    /// migrations have none).
    pub statement_timeout: Duration,
}

pub(super) fn from_source(src: &Source, data_dir: &Path) -> Result<DatabaseConfig, ConfigError> {
    let url = match src.get(DATABASE_URL) {
        None => DatabaseUrl::Sqlite(format!("sqlite://{}", data_dir.join("keel.db").display())),
        Some(u) if u.starts_with("sqlite:") => DatabaseUrl::Sqlite(u.to_owned()),
        Some(u) if u.starts_with("postgres://") || u.starts_with("postgresql://") => {
            DatabaseUrl::Postgres(Secret::new(u.to_owned()))
        }
        Some(_) => {
            return Err(ConfigError::invalid(
                DATABASE_URL,
                "expected a sqlite:// or postgres:// URL",
            ));
        }
    };
    // SQLite reads gain nothing from more connections than cores (one more
    // connection writes); PostgreSQL serves many.
    let default_max = if url.is_postgres() { 10 } else { 4 };
    let max_connections: u32 = src.parse_or(DB_MAX_CONNECTIONS, default_max)?;
    if max_connections == 0 {
        return Err(ConfigError::invalid(
            DB_MAX_CONNECTIONS,
            "must be at least 1",
        ));
    }
    Ok(DatabaseConfig {
        url,
        max_connections,
        min_connections: src.parse_or(DB_MIN_CONNECTIONS, 0)?,
        acquire_timeout: src.secs_or(DB_ACQUIRE_TIMEOUT_SECS, Duration::from_secs(5))?,
        idle_timeout: src.secs_or(DB_IDLE_SECS, Duration::from_secs(600))?,
        sqlite_busy_timeout: src.millis_or(SQLITE_BUSY_TIMEOUT_MS, Duration::from_millis(5000))?,
        sqlite_inline_reads: src.bool_or(SQLITE_INLINE_READS, true)?,
        pg_short_reads: src.bool_or(PG_SHORT_READS, true)?,
        statement_timeout: src.secs_or(DB_STATEMENT_TIMEOUT_SECS, Duration::from_secs(60))?,
    })
}
