//! Whether PostgreSQL can be reached at all, watched from outside the pool.
//!
//! A network that drops packets (a partition, a firewall gone wrong) gives
//! no error: a query sent on a live connection just waits, and sqlx has no
//! client-side timeout, so a request would wait for the request timeout
//! (408 after 30 s). So a probe runs `SELECT 1` every half second on a
//! connection of its own, with a 1 s limit; after two failures in a row the
//! database is *away* until a probe succeeds. While it is away, a request
//! still running after [`GRACE`] is answered 503 with `Retry-After`
//! (`http::layers::database_away`), and `/readyz` fails at once: a
//! partition is answered within a few seconds, as a refused connection
//! always was. SQLite is a local file and is never away.

use std::sync::Arc;
use std::time::Duration;

use sea_orm::sqlx::Connection;
use sea_orm::sqlx::postgres::PgConnection;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::config::Secret;

const PERIOD: Duration = Duration::from_millis(500);
const PROBE: Duration = Duration::from_secs(1);
const FAILURES: u32 = 2;

/// How long a request may go on once the database is away: one that does
/// not need it (a health check, a cached read) finishes well within it.
pub const GRACE: Duration = Duration::from_secs(1);

/// The database's reachability; cheap to clone.
#[derive(Clone)]
pub struct Reach {
    /// PostgreSQL's URL; `None` for SQLite, never away.
    url: Option<Secret>,
    away: Arc<watch::Sender<bool>>,
}

impl std::fmt::Debug for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reach")
            .field("watched", &self.url.is_some())
            .field("away", &self.is_away())
            .finish()
    }
}

impl Reach {
    /// Watches PostgreSQL at `url`.
    pub fn postgres(url: Secret) -> Self {
        Self {
            url: Some(url),
            away: Arc::new(watch::channel(false).0),
        }
    }

    /// A local database: always reachable.
    pub fn local() -> Self {
        Self {
            url: None,
            away: Arc::new(watch::channel(false).0),
        }
    }

    /// Whether there is anything to watch.
    pub fn is_watched(&self) -> bool {
        self.url.is_some()
    }

    pub fn is_away(&self) -> bool {
        *self.away.borrow()
    }

    /// Completes once the database has been away for `grace` without a
    /// break; never for a local one.
    pub async fn away_for(&self, grace: Duration) {
        let mut rx = self.away.subscribe();
        loop {
            if rx.wait_for(|away| *away).await.is_err() {
                return std::future::pending().await;
            }
            let back = rx.wait_for(|away| !*away);
            if tokio::time::timeout(grace, back).await.is_err() {
                return;
            }
        }
    }

    /// Probes until `stop`; keeps [`Reach::is_away`] up to date.
    pub async fn watch(self, stop: CancellationToken) {
        let Some(url) = self.url.clone() else { return };
        let mut conn: Option<PgConnection> = None;
        let mut failures = 0;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(PERIOD) => {}
            }
            let probe = async {
                if conn.is_none() {
                    conn = Some(PgConnection::connect(url.expose()).await?);
                }
                match conn.as_mut() {
                    Some(c) => c.ping().await,
                    None => Ok(()),
                }
            };
            let ok = matches!(tokio::time::timeout(PROBE, probe).await, Ok(Ok(())));
            if ok {
                failures = 0;
                if self.away.send_replace(false) {
                    tracing::info!("the database answers again");
                }
            } else {
                // A probe cut short leaves its connection mid-conversation.
                conn = None;
                failures += 1;
                if failures >= FAILURES && !self.away.send_replace(true) {
                    tracing::warn!(
                        "the database does not answer (no reply to {FAILURES} probes of {PROBE:?}): requests are answered 503 until it does"
                    );
                }
            }
        }
    }
}
