//! How far behind the replica is.
//!
//! Litestream answers on a control socket (HTTP over a Unix socket beside
//! the database, `GET /list`) with the time of its last successful sync of
//! each database. It syncs every sync interval even when nothing changed,
//! so the time since then is the replica's lag: about the sync interval
//! while all is well, growing for as long as the replica cannot be
//! written. keel asks once per sync interval (at most once a second) and
//! publishes the answer on `/metrics` (`keel_replica_lag_seconds`,
//! `keel_replica_last_sync_timestamp_seconds`) and in `/readyz`.
//!
//! The questions are sent with the platform's HTTP client but not through
//! its traced send: one span a second for a local socket would drown the
//! traces that matter.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::outbound::HttpClient;

/// The replica's lag as last seen; cheap to clone, every clone sees the
/// same. Empty (`lag` is `None`) while the database is not replicated.
#[derive(Clone, Debug, Default)]
pub struct Replication(Arc<Mutex<Option<Watch>>>);

#[derive(Debug, Clone, Copy)]
struct Watch {
    /// When replication started: the lag before a first sync counts from it.
    started: SystemTime,
    last_sync: Option<SystemTime>,
    sync: Duration,
    /// A lag above this is "behind".
    behind_after: Duration,
}

/// The replica as last seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lag {
    /// Since the last successful sync (or the start, before the first).
    pub seconds: f64,
    pub last_sync: Option<SystemTime>,
    /// More than three sync intervals, and more than a minute.
    pub behind: bool,
}

impl Replication {
    /// Replication began now, syncing every `sync`.
    pub(super) fn started(&self, sync: Duration) {
        let behind_after = (3 * sync).max(Duration::from_secs(60));
        *self.lock() = Some(Watch {
            started: SystemTime::now(),
            last_sync: None,
            sync,
            behind_after,
        });
    }

    fn synced(&self, at: SystemTime) {
        if let Some(w) = self.lock().as_mut() {
            w.last_sync = Some(at);
        }
    }

    /// The lag now, or `None` when the database is not replicated.
    pub fn lag(&self) -> Option<Lag> {
        self.lock().as_ref().map(Watch::lag)
    }

    fn publish(&self) {
        let Some(w) = *self.lock() else { return };
        let lag = w.lag();
        metrics::gauge!("keel_replica_sync_interval_seconds").set(w.sync.as_secs_f64());
        metrics::gauge!("keel_replica_lag_seconds").set(lag.seconds);
        if let Some(at) = lag
            .last_sync
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        {
            metrics::gauge!("keel_replica_last_sync_timestamp_seconds").set(at.as_secs_f64());
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Watch>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Watch {
    fn lag(&self) -> Lag {
        let since = self.last_sync.unwrap_or(self.started);
        let lag = SystemTime::now()
            .duration_since(since)
            .unwrap_or(Duration::ZERO);
        Lag {
            seconds: lag.as_secs_f64(),
            last_sync: self.last_sync,
            behind: lag > self.behind_after,
        }
    }
}

/// Litestream's `GET /list`.
#[derive(Deserialize)]
struct List {
    #[serde(default)]
    databases: Vec<Listed>,
}

/// keel's configuration names one database: the one listed (by its
/// absolute path, whatever path keel gave).
#[derive(Deserialize)]
struct Listed {
    #[serde(default)]
    last_sync_at: Option<String>,
}

/// Asks Litestream on `socket` for the database's last sync every `every`
/// until `stop`, and publishes the lag after each question, answered or not.
pub(super) async fn watch(
    http: HttpClient,
    socket: &Path,
    status: Replication,
    every: Duration,
    stop: CancellationToken,
) {
    let mut tick = tokio::time::interval(every.max(Duration::from_secs(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut told = false;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        match last_sync(&http).await {
            Ok(Some(at)) => status.synced(at),
            Ok(None) => {}
            Err(e) if !told => {
                told = true;
                tracing::debug!(socket = %socket.display(), "Litestream's control socket did not answer yet: {e}");
            }
            Err(_) => {}
        }
        status.publish();
    }
}

async fn last_sync(http: &HttpClient) -> Result<Option<SystemTime>, String> {
    let resp = http
        .client()
        .get("http://litestream/list")
        .send()
        .await
        .map_err(|e| crate::failure::chain(&e))?;
    let list: List = resp.json().await.map_err(|e| crate::failure::chain(&e))?;
    let Some(at) = list.databases.into_iter().find_map(|d| d.last_sync_at) else {
        return Ok(None);
    };
    let at = chrono::DateTime::parse_from_rfc3339(&at)
        .map_err(|e| format!("last_sync_at {at:?}: {e}"))?;
    Ok(Some(SystemTime::from(at.with_timezone(&chrono::Utc))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lag_counts_from_the_start_until_a_first_sync_then_from_the_last() {
        let r = Replication::default();
        assert_eq!(r.lag(), None, "not replicated");
        r.started(Duration::from_secs(1));
        let first = r.lag().map(|l| (l.last_sync, l.behind));
        assert_eq!(first, Some((None, false)));
        let long_ago = SystemTime::now() - Duration::from_secs(120);
        r.synced(long_ago);
        let lag = r.lag().unwrap_or(Lag {
            seconds: 0.0,
            last_sync: None,
            behind: false,
        });
        assert!(lag.seconds >= 120.0 && lag.behind, "{lag:?}");
        r.synced(SystemTime::now());
        assert_eq!(r.lag().map(|l| l.behind), Some(false));
    }
}
