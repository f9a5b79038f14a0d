//! `/healthz` (liveness: no dependencies) and `/readyz` (503 while the
//! database does not answer or a background task died). Redis is optional
//! for the HTTP services: while it is away they keep serving (degraded:
//! rate limits count per node, caches read the database), so `/readyz`
//! stays 200 and says `degraded`; taking every node out of rotation for it
//! would turn a cache outage into a full one. quotebot, which cannot work
//! without Redis, asks for it to be required.

use std::time::Duration;

use crate::http::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::cache::Cache;
use crate::db::Db;
use crate::tasks::Tasks;

const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// What `/readyz` checks.
#[derive(Clone)]
pub struct Readiness {
    pub db: Db,
    pub cache: Cache,
    /// The server's background tasks: one that died fails readiness.
    pub tasks: Tasks,
    /// Set once the process is asked to stop: readiness fails at once.
    pub draining: Draining,
}

/// Whether the process is draining: asked to stop, still serving while
/// load balancers notice `/readyz` fail and send their traffic elsewhere.
/// Cheap to clone; every clone sees the same flag.
#[derive(Clone, Debug, Default)]
pub struct Draining(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Draining {
    pub fn start(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn is_set(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok`; `degraded` (serving, an optional dependency away);
    /// `unavailable`; or `draining` (stopping: send requests elsewhere).
    status: &'static str,
    /// Per dependency: `ok` or what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    checks: Option<Checks>,
}

#[derive(Serialize, ToSchema)]
pub struct Checks {
    database: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    redis: Option<String>,
    /// When the database is replicated: `ok`, or `behind` and for how
    /// long no sync reached the replica (`degraded`: keel still serves).
    #[serde(skip_serializing_if = "Option::is_none")]
    replica: Option<String>,
    /// `ok`, or which background task stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks: Option<String>,
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, description = "The process is alive", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok",
        checks: None,
    })
}

/// Readiness: the database answers and no background task died (Redis,
/// when configured, is reported but optional); not while draining.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses(
        (status = 200, description = "Ready to serve (`degraded` while Redis is away or the database's replica is behind)", body = Health),
        (status = 503, description = "Draining (asked to stop, still serving for a moment), the database is unreachable, or a background task died", body = Health),
    ))]
pub async fn readyz(State(r): State<Readiness>) -> (StatusCode, Json<Health>) {
    if r.draining.is_set() {
        metrics::gauge!("keel_ready").set(0.0);
        let body = Health {
            status: "draining",
            checks: None,
        };
        return (StatusCode::SERVICE_UNAVAILABLE, Json(body));
    }
    check(&r.db, &r.cache, Some(&r.tasks), Redis::Optional).await
}

/// Sets the readiness gauges as `/readyz` would answer now (`keel_ready`
/// 1 or 0, `keel_dependency_up{dependency}`), for `/metrics`.
pub async fn sample(r: &Readiness) {
    let _ = readyz(State(r.clone())).await;
}

/// Whether readiness needs Redis (when the cache is Redis).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redis {
    Required,
    Optional,
}

/// The readiness verdict and body: the database (and Redis, when
/// `required` and the cache is Redis) answer within the check timeout,
/// and no background task of `tasks` died. Also quotebot's `/api/health`,
/// which has no such tasks and requires Redis.
pub async fn check(
    db: &Db,
    cache: &Cache,
    tasks: Option<&Tasks>,
    redis_needed: Redis,
) -> (StatusCode, Json<Health>) {
    let replica = db.replication().lag();
    let (db, redis) = tokio::join!(reachable_within(db, CHECK_TIMEOUT), async {
        if cache.is_redis() {
            Some(cache.ping_within(CHECK_TIMEOUT).await)
        } else {
            None
        }
    });
    let tasks = tasks.map(Tasks::health);
    let redis_ok = redis.as_ref().is_none_or(Result::is_ok);
    let replica_ok = replica.is_none_or(|l| !l.behind);
    let ready = db.is_ok()
        && (redis_ok || redis_needed == Redis::Optional)
        && tasks.as_ref().is_none_or(Result::is_ok);
    if !ready || !redis_ok || !replica_ok {
        tracing::warn!(database = ?db.as_ref().err(), redis = ?redis.as_ref().and_then(|r| r.as_ref().err()), tasks = ?tasks.as_ref().and_then(|t| t.as_ref().err()), replica_lag_secs = ?replica.map(|l| l.seconds.round()), "not ready");
    }
    metrics::gauge!("keel_ready").set(f64::from(u8::from(ready)));
    metrics::gauge!("keel_dependency_up", "dependency" => "database")
        .set(f64::from(u8::from(db.is_ok())));
    if let Some(r) = &redis {
        metrics::gauge!("keel_dependency_up", "dependency" => "redis")
            .set(f64::from(u8::from(r.is_ok())));
    }
    let show = |r: Result<(), crate::check::Unhealthy>| {
        r.map_or_else(|e| format!("unavailable: {e}"), |()| "ok".to_owned())
    };
    let body = Health {
        status: match (ready, redis_ok && replica_ok) {
            (false, _) => "unavailable",
            (true, false) => "degraded",
            (true, true) => "ok",
        },
        checks: Some(Checks {
            database: show(db),
            redis: redis.map(show),
            replica: replica.map(|l| {
                if l.behind {
                    format!("behind: no sync reached the replica for {:.0} s", l.seconds)
                } else {
                    "ok".to_owned()
                }
            }),
            tasks: tasks.map(show),
        }),
    };
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body))
}

/// A ping, unless the database is known to be away (then at once).
async fn reachable_within(db: &Db, within: Duration) -> Result<(), crate::check::Unhealthy> {
    if db.reach().is_away() {
        return Err(crate::check::Unhealthy::TimedOut);
    }
    db.ping_within(within).await
}

/// The health routes, documented.
pub fn routes(readiness: Readiness) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .with_state(readiness)
}
