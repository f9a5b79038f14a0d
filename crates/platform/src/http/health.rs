//! `/healthz` (liveness: no dependencies) and `/readyz` (503 while the
//! database or a configured Redis does not answer).

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
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok`, or `unavailable`.
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

/// Readiness: the database (and Redis, when configured) answer.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses(
        (status = 200, description = "Ready to serve", body = Health),
        (status = 503, description = "A dependency is unreachable", body = Health),
    ))]
pub async fn readyz(State(r): State<Readiness>) -> (StatusCode, Json<Health>) {
    check(&r.db, &r.cache, Some(&r.tasks)).await
}

/// The readiness verdict and body: the database and Redis (when the cache
/// is Redis) answer within the check timeout, and no background task of
/// `tasks` died. Also quotebot's `/api/health`, which has no such tasks.
pub async fn check(db: &Db, cache: &Cache, tasks: Option<&Tasks>) -> (StatusCode, Json<Health>) {
    let (db, redis) = tokio::join!(db.ping_within(CHECK_TIMEOUT), async {
        if cache.is_redis() {
            Some(cache.ping_within(CHECK_TIMEOUT).await)
        } else {
            None
        }
    });
    let tasks = tasks.map(Tasks::health);
    let ready = db.is_ok()
        && redis.as_ref().is_none_or(Result::is_ok)
        && tasks.as_ref().is_none_or(Result::is_ok);
    if !ready {
        tracing::warn!(database = ?db.as_ref().err(), redis = ?redis.as_ref().and_then(|r| r.as_ref().err()), tasks = ?tasks.as_ref().and_then(|t| t.as_ref().err()), "not ready");
    }
    let show = |r: Result<(), String>| {
        r.map_or_else(|e| format!("unavailable: {e}"), |()| "ok".to_owned())
    };
    let body = Health {
        status: if ready { "ok" } else { "unavailable" },
        checks: Some(Checks {
            database: show(db),
            redis: redis.map(show),
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

/// The health routes, documented.
pub fn routes(readiness: Readiness) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .with_state(readiness)
}
