//! `keel quotebot`: configuration checked, the health listener up (liveness
//! at once), the database and Redis reached and migrations applied (unless
//! `SKIP_MIGRATIONS=true`; see [`start`]), the shard count looked up, then one supervised child process per shard. Exit 0 on a stop
//! asked for; non-zero, after `fatal_wait`, on a fatal shard error, a
//! failed spawn or shard-count lookup; non-zero at once when shards die
//! too often. SIGTERM: shards get `shard_watchdog` to close, are killed at
//! `kill_timeout`, and the manager is gone by `parent_watchdog`.

pub mod children;
pub mod lookup;
mod start;
pub mod supervisor;

use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::gateway::Gateway;
use crate::health::{self, Health};
use crate::watchdog;
use keel_platform::signals::ShutdownSignals;
use supervisor::{Outcome, Supervisor};

/// Key prefix of everything quotebot keeps in Redis.
pub const REDIS_PREFIX: &str = "quotebot:";

pub async fn run(cfg: Config) -> anyhow::Result<()> {
    keel_platform::crypto::install_crypto_provider();
    // The health listener first: liveness answers while the start waits
    // for the database, a migration lock or Redis.
    let listener = health::bind(cfg.host, cfg.port).await?;
    // Before the address is printed: a stop asked for right after is kept.
    let mut stop_signals = ShutdownSignals::listen();
    let addr = listener.local_addr()?;
    println!("health       http://{addr}/api/health");
    let stop = CancellationToken::new();
    let status = Health::starting("starting");
    let gateway = Gateway::default();
    let health_task = tokio::spawn(health::serve(
        listener,
        health::router(status.clone(), gateway.clone()),
        stop.clone(),
    ));
    let watch = stop.clone();
    let timing = cfg.timing.clone();
    tokio::spawn(async move {
        stop_signals.next().await;
        tracing::info!(
            "stopping: the shards get {:?} to close",
            timing.shard_watchdog
        );
        watchdog::arm(timing.parent_watchdog, "the manager", 1);
        watch.cancel();
    });
    let result = match start::prepare(&cfg, &status, &stop).await {
        Ok(Some((conn, cache))) => {
            status.ready(conn, cache);
            supervise(&cfg, &stop, gateway).await
        }
        Ok(None) => Ok(()),
        Err(e) => Err(e),
    };
    stop.cancel();
    let _ = health_task.await;
    result
}

/// Waits `fatal_wait` (or until a stop is asked), then fails with `why`.
async fn fail_after_wait(
    cfg: &Config,
    stop: &CancellationToken,
    why: String,
) -> anyhow::Result<()> {
    tracing::error!("{why}; exiting in {:?}", cfg.timing.fatal_wait);
    tokio::select! {
        () = stop.cancelled() => {}
        () = tokio::time::sleep(cfg.timing.fatal_wait) => {}
    }
    anyhow::bail!(why)
}

async fn supervise(cfg: &Config, stop: &CancellationToken, report: Gateway) -> anyhow::Result<()> {
    let gateway = tokio::select! {
        () = stop.cancelled() => return Ok(()),
        g = lookup::shard_count(cfg) => g,
    };
    let gateway = match gateway {
        Ok(g) => g,
        Err(e) => return fail_after_wait(cfg, stop, e.to_string()).await,
    };
    tracing::info!(shards = gateway.shards, "shard count from Discord");
    let mut sup = Supervisor::new(
        gateway.shards,
        gateway.url,
        cfg.timing.clone(),
        stop.clone(),
        report,
    );
    let outcome = sup.run().await;
    let result = match outcome {
        Outcome::Stopped => Ok(()),
        Outcome::TooManyDeaths(n) => Err(anyhow::anyhow!(
            "{n} shard deaths within {:?}: giving up",
            cfg.timing.death_window
        )),
        Outcome::SpawnFailed(why) => {
            sup.stop_all().await;
            return fail_after_wait(cfg, stop, why).await;
        }
        Outcome::Fatal(id) => {
            sup.stop_all().await;
            return fail_after_wait(cfg, stop, format!("shard {id} hit a fatal error")).await;
        }
    };
    sup.stop_all().await;
    result
}
