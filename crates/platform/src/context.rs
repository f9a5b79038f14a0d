//! The shared context every service is built from.

use std::sync::Arc;
use std::time::Duration;

use crate::cache::Cache;
use crate::config::{ConfigError, PlatformConfig};
use crate::crypto::SecretBox;
use crate::db::Db;
use crate::http::Readiness;
use crate::mail::Mailer;
use crate::migrate::{self, MigrateError, MigrationSet};
use crate::outbound::HttpClient;

/// Why the process could not start. Each names what to fix.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("DATABASE_URL: cannot open the database: {0}")]
    Database(sea_orm::DbErr),
    #[error("REDIS_URL: cannot use Redis")]
    Redis(#[source] crate::cache::CacheError),
    #[error(transparent)]
    Migrate(#[from] MigrateError),
    #[error("{var}: cannot listen on {addr}: {reason}")]
    Bind {
        var: String,
        addr: String,
        reason: String,
    },
    /// Anything else, with its cause.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl StartError {
    /// Any other failure at start, keeping it as the source.
    pub fn other(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Other(e.into())
    }
}

/// Connections and clients shared by every service of the process.
#[derive(Clone)]
pub struct Platform {
    pub config: Arc<PlatformConfig>,
    pub db: Db,
    pub cache: Cache,
    /// What every credential check goes through (`guard`).
    pub guard: crate::guard::Guard,
    pub http: HttpClient,
    pub mailer: Mailer,
    /// Seals secrets stored in the database (`KEEL_SECRET_KEY`).
    pub secrets: SecretBox,
    /// Wakes this process's job worker (see [`Platform::wake_jobs`]).
    pub jobs_wake: Arc<tokio::sync::Notify>,
    /// Set when the process is asked to stop (`/readyz` then fails).
    pub draining: crate::http::health::Draining,
    /// The last hour of this process's traffic (the console's health page).
    pub traffic: crate::telemetry::traffic::Traffic,
}

impl Platform {
    /// Opens the database and (when configured) Redis, builds the clients.
    pub async fn connect(config: PlatformConfig) -> Result<Self, StartError> {
        config.ensure_data_dir()?;
        let secrets = SecretBox::from_config(&config)?;
        let db = Db::connect(&config.database)
            .await
            .map_err(StartError::Database)?;
        let cache = match &config.redis_url {
            // Optional to the HTTP services: a Redis away at start is an
            // outage like any other (served degraded), not a failed start.
            Some(url) => Cache::redis_or_later(url, &config.redis_prefix, Duration::from_secs(5))
                .await
                .map_err(StartError::Redis)?,
            None => Cache::local(&config.redis_prefix),
        }
        .with_pseudonyms(secrets.pseudonyms());
        let guard = crate::guard::Guard::new(cache.clone()).map_err(StartError::other)?;
        let http = HttpClient::new(&config.outbound).map_err(StartError::other)?;
        let mailer = Mailer::new(&config.mail).map_err(StartError::other)?;
        Ok(Self {
            config: Arc::new(config),
            db,
            cache,
            guard,
            http,
            mailer,
            secrets,
            jobs_wake: Arc::new(tokio::sync::Notify::new()),
            draining: crate::http::health::Draining::default(),
            traffic: crate::telemetry::traffic::Traffic::default(),
        })
    }

    /// Tells this process's job worker that a job was committed that is due
    /// now, so it claims it at once instead of at its next poll
    /// (`KEEL_JOB_POLL_MS`, which stays the bound for jobs enqueued
    /// elsewhere).
    pub fn wake_jobs(&self) {
        self.jobs_wake.notify_one();
    }

    /// Applies pending migrations of the platform and `sets`.
    pub async fn migrate(
        &self,
        sets: &[&MigrationSet],
    ) -> Result<Vec<migrate::Applied>, StartError> {
        let mut all: Vec<&MigrationSet> = vec![&crate::schema::MIGRATIONS];
        all.extend(sets.iter().copied());
        Ok(migrate::run(&self.db, &self.config.migrations, &all).await?)
    }

    /// What `/metrics` reads before each scrape: the pools, the job queue
    /// (`kinds` and any other kind in the table) and readiness.
    pub fn metrics_sampler(
        &self,
        tasks: &crate::tasks::Tasks,
        kinds: Vec<&'static str>,
    ) -> crate::telemetry::Sampler {
        let db = self.db.clone();
        let readiness = self.readiness(tasks);
        let kinds: Arc<[&'static str]> = kinds.into();
        Arc::new(move || {
            let (db, readiness, kinds) = (db.clone(), readiness.clone(), kinds.clone());
            Box::pin(async move {
                db.sample_pools();
                if let Err(e) = crate::jobs::gauges::sample(&db, &kinds).await {
                    tracing::warn!(error = %e, "reading the job queue for /metrics failed");
                }
                crate::http::health::sample(&readiness).await;
            })
        })
    }

    pub fn readiness(&self, tasks: &crate::tasks::Tasks) -> Readiness {
        Readiness {
            db: self.db.clone(),
            cache: self.cache.clone(),
            tasks: tasks.clone(),
            draining: self.draining.clone(),
        }
    }
}
