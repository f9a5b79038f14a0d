//! The relational store: SeaORM connections for SQLite and PostgreSQL.
//!
//! Callers say whether they read or write. On PostgreSQL both are the same
//! pool. On SQLite, which has one writer at a time, writes go through a pool
//! of exactly one connection, so writers queue in the process instead of
//! sleeping in SQLite's busy handler, and reads use a pool of their own.

use std::sync::Arc;
use std::time::Duration;

pub mod backup;
mod connect;
mod erase;
pub mod grouped;
mod idle;
pub mod inline;
mod pools;
pub mod reach;
pub mod replica;
pub mod replica_lag;
pub mod replicate;
pub mod restore;
mod short;
pub mod short_pg;
mod sqlite_time;

pub use pools::PoolFigures;

use sea_orm::{
    ConnectOptions, Database, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr,
    SqliteTransactionMode, TransactionOptions, TransactionTrait,
};

use crate::config::{DatabaseConfig, DatabaseUrl};
use connect::{common, no_transaction, server_limits, sqlite_options};

/// Pooled database handles; cheap to clone.
#[derive(Clone, Debug)]
pub struct Db {
    reader: DatabaseConnection,
    writer: DatabaseConnection,
    /// For background polling (see [`Db::background`]).
    background: DatabaseConnection,
    /// Short reads on the calling thread (SQLite files only).
    inline: Option<Arc<inline::InlineReads>>,
    /// Short reads on connections outside the pool (PostgreSQL only).
    short: Option<Arc<short_pg::ShortReads>>,
    /// Whether the database can be reached at all.
    reach: reach::Reach,
    /// Connections idle this long are closed.
    idle_for: Duration,
    /// How far behind its replica is (SQLite, when replicated).
    replication: replica_lag::Replication,
}

impl Db {
    /// Opens the pools. SQLite runs in WAL mode with a busy timeout and
    /// foreign keys on; its file is created if absent.
    pub async fn connect(cfg: &DatabaseConfig) -> Result<Self, DbErr> {
        match &cfg.url {
            DatabaseUrl::Postgres(url) => {
                // Half the connections serve short reads outside the pool
                // (`short_pg`); the pool keeps the rest, at least one.
                let short_max = if cfg.pg_short_reads {
                    cfg.max_connections / 2
                } else {
                    0
                };
                let limits = server_limits(cfg);
                let short = short_pg::ShortReads::for_url(
                    url.expose(),
                    short_max,
                    cfg.acquire_timeout,
                    &limits,
                )
                .map(Arc::new);
                let pooled = cfg.max_connections - short.as_ref().map_or(0, |_| short_max);
                let mut opts = ConnectOptions::new(url.expose().to_owned());
                common(&mut opts, cfg, pooled);
                opts.map_sqlx_postgres_opts(move |o| o.options(limits.clone()));
                // Ping only connections idle for a while (a restarted server or
                // a proxy may have dropped them); busy ones go straight through.
                opts.test_before_acquire_if_idle_for(Duration::from_secs(1));
                opts.map_sqlx_postgres_before_acquire(|conn, _| {
                    Box::pin(std::future::ready(Ok(no_transaction::<
                        sea_orm::sqlx::Postgres,
                    >(conn))))
                });
                let background = {
                    let mut one = opts.clone();
                    one.max_connections(1).min_connections(0);
                    timed_statements(Database::connect(one).await?)
                };
                let pool = timed_statements(Database::connect(opts).await?);
                Ok(Self {
                    reader: pool.clone(),
                    writer: pool,
                    background,
                    inline: None,
                    short,
                    reach: reach::Reach::postgres(url.clone()),
                    idle_for: cfg.idle_timeout,
                    replication: replica_lag::Replication::default(),
                })
            }
            DatabaseUrl::Sqlite(url) => {
                let writer =
                    timed_statements(Database::connect(sqlite_options(url, cfg, 1)).await?);
                let reader = timed_statements(
                    Database::connect(sqlite_options(url, cfg, cfg.max_connections)).await?,
                );
                let inline = (cfg.sqlite_inline_reads)
                    .then(|| inline::InlineReads::for_url(url))
                    .flatten()
                    .map(Arc::new);
                Ok(Self {
                    background: writer.clone(),
                    reader,
                    writer,
                    inline,
                    short: None,
                    reach: reach::Reach::local(),
                    idle_for: cfg.idle_timeout,
                    replication: replica_lag::Replication::default(),
                })
            }
        }
    }

    /// Closes the connections kept outside the pools (short reads) once
    /// they have been idle as long as the pools' own would be, checking
    /// every few seconds until `stop`.
    pub async fn close_idle_until(self, stop: tokio_util::sync::CancellationToken) {
        let every = (self.idle_for / 4).clamp(Duration::from_secs(1), Duration::from_secs(30));
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            if let Some(inline) = &self.inline {
                inline.close_idle(self.idle_for);
            }
            if let Some(short) = &self.short {
                short.close_idle(self.idle_for).await;
            }
        }
    }

    /// How far behind the replica is (see [`replica_lag`]).
    pub fn replication(&self) -> &replica_lag::Replication {
        &self.replication
    }

    /// Whether the database can be reached (see [`reach`]).
    pub fn reach(&self) -> &reach::Reach {
        &self.reach
    }

    /// For queries that only read.
    pub fn read(&self) -> &DatabaseConnection {
        &self.reader
    }

    /// For statements that write outside a transaction.
    pub fn write(&self) -> &DatabaseConnection {
        &self.writer
    }

    /// For work that polls on its own (the job worker's claims, every
    /// `KEEL_JOB_POLL_MS`; on PostgreSQL the readiness ping too). On PostgreSQL a pool of one connection of its
    /// own: sqlx hands out the idle connection that has waited longest, so
    /// polling through the main pool touched every connection in turn and
    /// none was ever idle long enough to close after a burst of load. On
    /// SQLite the writer.
    pub fn background(&self) -> &DatabaseConnection {
        &self.background
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
    pub async fn ping_within(&self, within: Duration) -> Result<(), crate::check::Unhealthy> {
        // On PostgreSQL the background connection: a load balancer's probe
        // every second would otherwise keep every pooled connection open
        // too. On SQLite a reader (the writer may be in a long transaction).
        let pool = if self.is_postgres() {
            &self.background
        } else {
            &self.reader
        };
        match tokio::time::timeout(within, pool.ping()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(crate::check::Unhealthy::Database(e)),
            Err(_) => Err(crate::check::Unhealthy::TimedOut),
        }
    }

    pub async fn close(self) {
        if let Some(short) = &self.short {
            short.close().await;
        }
        for pool in [self.reader, self.writer, self.background] {
            if let Err(e) = pool.close().await {
                tracing::debug!(error = %e, "closing a database pool");
            }
        }
    }
}

/// Counts an inline read's outcome (`keel_db_inline_reads_total`).
fn count<T>(result: Result<T, inline::Miss>) -> Result<T, inline::Miss> {
    counted(result, "inline")
}

/// Counts a short read's outcome: `outcome` where it was served, or "pool".
fn counted<T>(result: Result<T, inline::Miss>, outcome: &'static str) -> Result<T, inline::Miss> {
    match &result {
        Ok(_) => {
            metrics::counter!("keel_db_inline_reads_total", "outcome" => outcome).increment(1);
        }
        Err(miss) => {
            tracing::debug!(miss = %crate::failure::chain(miss), "read through the pool instead");
            metrics::counter!("keel_db_inline_reads_total", "outcome" => "pool").increment(1);
        }
    }
    result
}

/// The file a `sqlite:` URL names; `None` for an in-memory database.
pub fn sqlite_file(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path.contains(":memory:") || rest.contains("mode=memory") {
        return None;
    }
    Some(path)
}

/// Whether a database error is a unique-constraint violation.
pub fn is_unique_violation(err: &DbErr) -> bool {
    matches!(
        err.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}

/// Each statement seen once (`observe::statement`): its time counted to
/// the request that runs it when requests are timed, and a statement span
/// under the current span when traces are on.
fn timed_statements(mut conn: DatabaseConnection) -> DatabaseConnection {
    let system = system_name(conn.get_database_backend());
    conn.set_metric_callback(move |info| {
        crate::observe::statement(system, &info.statement.sql, info.elapsed, info.failed);
    });
    conn
}

/// The OpenTelemetry name of a backend (`db.system.name`).
fn system_name(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Postgres => "postgresql",
        DbBackend::Sqlite => "sqlite",
        _ => "other_sql",
    }
}
