//! How keel's pools connect: the options every pool shares, SQLite's
//! pragmas, PostgreSQL's server-side limits, and the check that hands out
//! only connections holding no transaction.

use sea_orm::ConnectOptions;
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};

use crate::config::DatabaseConfig;

pub(super) fn common(opts: &mut ConnectOptions, cfg: &DatabaseConfig, max: u32) {
    opts.max_connections(max)
        .min_connections(cfg.min_connections.min(max))
        .acquire_timeout(cfg.acquire_timeout)
        .connect_timeout(cfg.acquire_timeout)
        .idle_timeout(cfg.idle_timeout)
        .sqlx_logging(false);
}

pub(super) fn sqlite_options(url: &str, cfg: &DatabaseConfig, max: u32) -> ConnectOptions {
    let mut opts = ConnectOptions::new(url.to_owned());
    common(&mut opts, cfg, max);
    // A local file cannot drop a connection: never ping.
    opts.test_before_acquire(false);
    opts.map_sqlx_sqlite_before_acquire(|conn, _| {
        Box::pin(std::future::ready(Ok(no_transaction::<
            sea_orm::sqlx::Sqlite,
        >(conn))))
    });
    let busy = cfg.sqlite_busy_timeout;
    opts.map_sqlx_sqlite_opts(move |o| {
        o.create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(busy)
            .foreign_keys(true)
            // Deleted rows are overwritten with zeros (see `erase`).
            .pragma("secure_delete", "on")
    });
    opts
}

/// Whether a pooled connection may be handed out: only when it holds no
/// transaction. sqlx counts a connection's open transactions itself. When a
/// statement fails in a way that makes SQLite end the transaction on its
/// own (`SQLITE_FULL`, `SQLITE_IOERR`), the ROLLBACK that follows fails,
/// the count stays up, and every later transaction on that connection
/// became a savepoint inside one that never commits: acknowledged writes
/// that vanished (found by the disk-full fault test). Such a connection is
/// closed instead, which rolls back whatever it held, and the pool opens a
/// fresh one.
pub(super) fn no_transaction<DB: sea_orm::sqlx::Database>(conn: &mut DB::Connection) -> bool {
    use sqlx_core::transaction::TransactionManager;
    let depth = DB::TransactionManager::get_transaction_depth(conn);
    if depth > 0 {
        tracing::warn!(
            depth,
            "a pooled database connection still holds a transaction; closing it"
        );
    }
    depth == 0
}

/// PostgreSQL settings for keel's connections: a statement running longer
/// than `KEEL_DB_STATEMENT_TIMEOUT_SECS` is cancelled by the server, and a
/// session idle inside a transaction for a minute (a client gone, a
/// partition) is ended, releasing its locks.
pub(super) fn server_limits(cfg: &DatabaseConfig) -> Vec<(&'static str, String)> {
    vec![
        (
            "statement_timeout",
            format!("{}ms", cfg.statement_timeout.as_millis()),
        ),
        ("idle_in_transaction_session_timeout", "60s".to_owned()),
    ]
}
