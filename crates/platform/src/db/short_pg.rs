//! Short PostgreSQL reads on connections of their own.
//!
//! sqlx's pool tests every connection given back to it with a round trip
//! (a `Sync` and its `ReadyForQuery`), unconditionally: a one-row read
//! through the pool costs PostgreSQL two round trips, and the second keeps
//! the connection from the next caller meanwhile. Profiled under load,
//! `GET /register/status` spent 15 % of keel's time in that test alone.
//!
//! Here a short read (the same reads [`super::inline`] serves on SQLite)
//! runs on one of a few connections kept outside the pool, the SQL and
//! values SeaORM builds bound as SeaORM binds them and each row decoded by
//! the model's own `FromQueryResult`, so a model reads the same either way
//! (tests compare the two). A connection goes back to the idle list only
//! when its read completed; one whose read failed or was cancelled half-way
//! is dropped, so nothing is left unread on a connection given to the next
//! caller, and the read goes through the pool, which reports any real
//! error.
//!
//! Kept for the same short reads as on SQLite, on PostgreSQL (docs/
//! performance.md, "Short reads on PostgreSQL"); what justified it:
//! PostgreSQL GET /register/status 14.6k -> 17.7k req/s, 49 % -> 56 % of
//! its pgbench floor.

use std::time::Duration;

use sea_orm::sea_query::Values;
use sea_orm::sqlx::postgres::{PgConnectOptions, PgConnection};
use sea_orm::sqlx::{self, ConnectOptions, Connection};
use sea_orm::{QueryResult, SelectorTrait, Statement};
use sea_query_sqlx::SqlxValues;
use tokio::sync::{Semaphore, SemaphorePermit};

use super::idle::Idle;
use super::inline::Miss;

/// A few connections for short reads, at most `max` open at once.
pub struct ShortReads {
    options: PgConnectOptions,
    idle: Idle<PgConnection>,
    slots: Semaphore,
    wait: Duration,
}

impl std::fmt::Debug for ShortReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShortReads")
            .field("slots", &self.slots.available_permits())
            .finish_non_exhaustive()
    }
}

impl ShortReads {
    /// For the server `url` names; `None` when `max` is zero or the URL is
    /// not one sqlx reads (the pool then reports it).
    pub fn for_url(
        url: &str,
        max: u32,
        wait: Duration,
        limits: &[(&'static str, String)],
    ) -> Option<Self> {
        if max == 0 {
            return None;
        }
        let options = url.parse::<PgConnectOptions>().ok()?;
        // Named after the pool's connections ("keel" unless the URL names
        // them), so an operator tells one deployment's from another's.
        let name = format!(
            "{} short reads",
            options.get_application_name().unwrap_or("keel")
        );
        Some(Self {
            options: options
                .application_name(&name)
                .options(limits.iter().cloned())
                .disable_statement_logging(),
            idle: Idle::new(usize::MAX),
            slots: Semaphore::new(usize::try_from(max).unwrap_or(1)),
            wait,
        })
    }

    /// An idle connection or a new one, and the slot it holds.
    async fn take(&self) -> Result<(PgConnection, SemaphorePermit<'_>), Miss> {
        let slot = tokio::time::timeout(self.wait, self.slots.acquire())
            .await
            .map_err(|_| Miss::Busy)?
            .map_err(|_| Miss::Off)?;
        let conn = match self.idle.take() {
            Some(conn) => conn,
            None => PgConnection::connect_with(&self.options)
                .await
                .map_err(Miss::Postgres)?,
        };
        Ok((conn, slot))
    }

    /// What `stmt` (a PostgreSQL select) reads, each row decoded as SeaORM
    /// decodes it for the selector `S` (one model, or a model and its
    /// related one). The connection goes back to the idle list only once
    /// its read completed; on an error, or when this future is dropped
    /// half-way, it is closed.
    pub async fn all<S: SelectorTrait>(&self, stmt: Statement) -> Result<Vec<S::Item>, Miss> {
        let (mut conn, _slot) = self.take().await?;
        let values = SqlxValues(stmt.values.unwrap_or(Values(Vec::new())));
        let rows = sqlx::query_with(sqlx::AssertSqlSafe(stmt.sql.as_str()), values)
            .fetch_all(&mut conn)
            .await
            .map_err(Miss::Postgres)?;
        self.idle.put(conn);
        rows.into_iter()
            .map(|row| {
                S::from_raw_query_result(QueryResult::from(row)).map_err(|e| Miss::Decode {
                    column: String::new(),
                    why: e.to_string(),
                })
            })
            .collect()
    }

    /// Closes the connections idle for `longer_than`.
    pub async fn close_idle(&self, longer_than: std::time::Duration) {
        for conn in self.idle.expired(longer_than) {
            if let Err(e) = conn.close().await {
                tracing::debug!(error = %e, "closing an idle short-read connection");
            }
        }
    }

    /// Closes the idle connections (each says goodbye to the server).
    pub async fn close(&self) {
        self.slots.close();
        for conn in self.idle.drain() {
            if let Err(e) = conn.close().await {
                tracing::debug!(error = %e, "closing a short-read connection");
            }
        }
    }
}
