//! The relational store: SeaORM connections for SQLite and PostgreSQL.
//!
//! Callers say whether they read or write. On PostgreSQL both are the same
//! pool. On SQLite, which has one writer at a time, writes go through a pool
//! of exactly one connection, so writers queue in the process instead of
//! sleeping in SQLite's busy handler, and reads use a pool of their own.

use std::time::Duration;

use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    ConnectOptions, Database, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr,
    SqliteTransactionMode, TransactionOptions, TransactionTrait,
};

use crate::config::{DatabaseConfig, DatabaseUrl};

/// Pooled database handles; cheap to clone.
#[derive(Clone, Debug)]
pub struct Db {
    reader: DatabaseConnection,
    writer: DatabaseConnection,
}

impl Db {
    /// Opens the pools. SQLite runs in WAL mode with a busy timeout and
    /// foreign keys on; its file is created if absent.
    pub async fn connect(cfg: &DatabaseConfig) -> Result<Self, DbErr> {
        match &cfg.url {
            DatabaseUrl::Postgres(url) => {
                let mut opts = ConnectOptions::new(url.expose().to_owned());
                common(&mut opts, cfg, cfg.max_connections);
                // Ping only connections idle for a while (a restarted server or
                // a proxy may have dropped them); busy ones go straight through.
                opts.test_before_acquire_if_idle_for(Duration::from_secs(1));
                let pool = Database::connect(opts).await?;
                Ok(Self {
                    reader: pool.clone(),
                    writer: pool,
                })
            }
            DatabaseUrl::Sqlite(url) => {
                let writer = Database::connect(sqlite_options(url, cfg, 1)).await?;
                let reader =
                    Database::connect(sqlite_options(url, cfg, cfg.max_connections)).await?;
                Ok(Self { reader, writer })
            }
        }
    }

    /// For queries that only read.
    pub fn read(&self) -> &DatabaseConnection {
        &self.reader
    }

    /// For statements that write outside a transaction.
    pub fn write(&self) -> &DatabaseConnection {
        &self.writer
    }

    pub fn backend(&self) -> DbBackend {
        self.reader.get_database_backend()
    }

    pub fn is_postgres(&self) -> bool {
        self.backend() == DbBackend::Postgres
    }

    /// A transaction that will write: on SQLite it takes the write lock at
    /// `BEGIN` (IMMEDIATE), so it cannot fail half-way on a lock upgrade.
    pub async fn begin_write(&self) -> Result<DatabaseTransaction, DbErr> {
        self.begin_mode(SqliteTransactionMode::Immediate).await
    }

    /// A transaction that excludes every other writer (migrations).
    pub async fn begin_exclusive(&self) -> Result<DatabaseTransaction, DbErr> {
        self.begin_mode(SqliteTransactionMode::Exclusive).await
    }

    async fn begin_mode(&self, mode: SqliteTransactionMode) -> Result<DatabaseTransaction, DbErr> {
        let sqlite_transaction_mode = (self.backend() == DbBackend::Sqlite).then_some(mode);
        self.writer
            .begin_with_options(TransactionOptions {
                sqlite_transaction_mode,
                ..TransactionOptions::default()
            })
            .await
    }

    /// Checks the database answers within `within`.
    pub async fn ping_within(&self, within: Duration) -> Result<(), String> {
        match tokio::time::timeout(within, self.reader.ping()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("timed out".to_owned()),
        }
    }

    pub async fn close(self) {
        for pool in [self.reader, self.writer] {
            if let Err(e) = pool.close().await {
                tracing::debug!(error = %e, "closing a database pool");
            }
        }
    }
}

fn common(opts: &mut ConnectOptions, cfg: &DatabaseConfig, max: u32) {
    opts.max_connections(max)
        .min_connections(cfg.min_connections.min(max))
        .acquire_timeout(cfg.acquire_timeout)
        .connect_timeout(cfg.acquire_timeout)
        .sqlx_logging(false);
}

fn sqlite_options(url: &str, cfg: &DatabaseConfig, max: u32) -> ConnectOptions {
    let mut opts = ConnectOptions::new(url.to_owned());
    common(&mut opts, cfg, max);
    // A local file cannot drop a connection: never ping.
    opts.test_before_acquire(false);
    let busy = cfg.sqlite_busy_timeout;
    opts.map_sqlx_sqlite_opts(move |o| {
        o.create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(busy)
            .foreign_keys(true)
    });
    opts
}

/// Whether a database error is a unique-constraint violation.
pub fn is_unique_violation(err: &DbErr) -> bool {
    matches!(
        err.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}
