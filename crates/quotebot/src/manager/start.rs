//! The start, behind a health listener that is already up: the database
//! (retried until it answers), migrations (unless `SKIP_MIGRATIONS=true`),
//! Redis (retried until it answers). Readiness says which of them the
//! start waits for; a stop asked for meanwhile ends it cleanly. What the
//! contract makes fatal stays fatal: a schema without history, a table lock
//! not granted in 60 s, a migration lock not granted in 2 minutes.

use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

use keel_platform::cache::Cache;
use keel_platform::db::Db;
use tokio_util::sync::CancellationToken;

use super::REDIS_PREFIX;
use crate::config::Config;
use crate::{db, health::Health};

/// The longest wait between two attempts to reach a dependency.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(5);

/// The database and Redis, connected and migrated; `None` when a stop was
/// asked for first.
pub async fn prepare(
    cfg: &Config,
    health: &Health,
    stop: &CancellationToken,
) -> anyhow::Result<Option<(Db, Cache)>> {
    let Some(conn) = until_up("the database", health, stop, || db::connect(&cfg.db)).await else {
        return Ok(None);
    };
    if cfg.db.migrations.skip {
        tracing::info!("SKIP_MIGRATIONS=true: not migrating");
    } else {
        health.doing("migrating the database".to_owned());
        tokio::select! {
            () = stop.cancelled() => return Ok(None),
            migrated = db::migrate(&conn, &cfg.db) => { migrated?; }
        }
    }
    let redis = || async {
        Cache::redis(&cfg.redis_url, REDIS_PREFIX, Duration::from_secs(5))
            .await
            .map_err(|e| anyhow::anyhow!("REDIS_URL: cannot connect: {e}"))
    };
    let Some(cache) = until_up("Redis", health, stop, redis).await else {
        return Ok(None);
    };
    Ok(Some((conn, cache)))
}

/// `attempt` until it succeeds, backing off to [`MAX_RETRY_WAIT`], with
/// readiness saying why; `None` when a stop is asked for first.
async fn until_up<T, E, F, Fut>(
    what: &str,
    health: &Health,
    stop: &CancellationToken,
    mut attempt: F,
) -> Option<T>
where
    E: Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    health.doing(format!("connecting to {what}"));
    let mut wait = Duration::from_millis(250);
    loop {
        let outcome = tokio::select! {
            () = stop.cancelled() => return None,
            outcome = attempt() => outcome,
        };
        match outcome {
            Ok(v) => return Some(v),
            Err(e) => {
                tracing::warn!("{what} cannot be reached ({e}); trying again in {wait:?}");
                health.doing(format!("waiting for {what}: {e}"));
            }
        }
        tokio::select! {
            () = stop.cancelled() => return None,
            () = tokio::time::sleep(wait) => {}
        }
        wait = (wait * 2).min(MAX_RETRY_WAIT);
    }
}
