//! The relational store: one SeaORM connection for SQLite and PostgreSQL.

use std::ops::Deref;
use std::time::Duration;

use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    ConnectOptions, Database, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr,
    SqliteTransactionMode, TransactionOptions, TransactionTrait,
};

use crate::config::{DatabaseConfig, DatabaseUrl};

/// A pooled database handle; derefs to SeaORM's connection.
#[derive(Clone, Debug)]
pub struct Db {
    conn: DatabaseConnection,
}

impl Deref for Db {
    type Target = DatabaseConnection;

    fn deref(&self) -> &DatabaseConnection {
        &self.conn
    }
}

impl Db {
    /// Opens the pool. SQLite runs in WAL mode with a busy timeout and foreign
    /// keys on; its file is created if absent.
    pub async fn connect(cfg: &DatabaseConfig) -> Result<Self, DbErr> {
        let url = match &cfg.url {
            DatabaseUrl::Sqlite(u) => u.clone(),
            DatabaseUrl::Postgres(u) => u.expose().to_owned(),
        };
        let mut opts = ConnectOptions::new(url);
        opts.max_connections(cfg.max_connections)
            .min_connections(cfg.min_connections)
            .acquire_timeout(cfg.acquire_timeout)
            .connect_timeout(cfg.acquire_timeout)
            .sqlx_logging(false);
        let busy = cfg.sqlite_busy_timeout;
        opts.map_sqlx_sqlite_opts(move |o| {
            o.create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(busy)
                .foreign_keys(true)
        });
        let conn = Database::connect(opts).await?;
        Ok(Self { conn })
    }

    pub fn backend(&self) -> DbBackend {
        self.conn.get_database_backend()
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
        self.conn
            .begin_with_options(TransactionOptions {
                sqlite_transaction_mode,
                ..TransactionOptions::default()
            })
            .await
    }

    /// Checks the database answers within `within`.
    pub async fn ping_within(&self, within: Duration) -> Result<(), String> {
        match tokio::time::timeout(within, self.conn.ping()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("timed out".to_owned()),
        }
    }

    pub async fn close(self) {
        if let Err(e) = self.conn.close().await {
            tracing::debug!(error = %e, "closing the database pool");
        }
    }
}

/// Whether a database error is a unique-constraint violation.
pub fn is_unique_violation(err: &DbErr) -> bool {
    matches!(
        err.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}
