//! The health listener (`PORT`, default 3000; every interface, IPv4 and
//! IPv6, unless `HOST` names one):
//! - `GET /api/health/live`: 200 `{"status":"ok"}`, no dependency, so a
//!   short database or Redis outage does not get the container replaced;
//! - `GET /api/health`: 200 `{"status":"ok","checks":{"database":"ok","redis":"ok"}}`
//!   when both answer within 2 seconds, else 503 with `"status":"unavailable"`
//!   and the failing check saying what is wrong; it recovers by itself.
//!   While the process starts (connecting, migrating, which can wait
//!   minutes on a lock) it is 503 with `"status":"starting"` and
//!   `checks.startup` saying what it waits for; liveness answers from the
//!   first moment, before any of that;
//! - `GET /api/health/gateway`: the shards' gateway sessions, counted
//!   ([`crate::gateway`]), for the operator console's health page.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, PoisonError, RwLock};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use keel_platform::cache::Cache;
use keel_platform::db::Db;
use serde_json::json;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
struct Deps {
    db: Db,
    cache: Cache,
}

#[derive(Clone)]
enum Phase {
    Starting(String),
    Ready(Box<Deps>),
}

/// What readiness checks: what the start waits for, then the database and
/// Redis; cheap to clone.
#[derive(Clone)]
pub struct Health(Arc<RwLock<Phase>>);

impl Health {
    pub fn starting(doing: &str) -> Self {
        Self(Arc::new(RwLock::new(Phase::Starting(doing.to_owned()))))
    }

    /// Says what the start waits for now.
    pub fn doing(&self, what: String) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Phase::Starting(what);
    }

    /// Started: readiness checks the dependencies from now on.
    pub fn ready(&self, db: Db, cache: Cache) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) =
            Phase::Ready(Box::new(Deps { db, cache }));
    }

    fn phase(&self) -> Phase {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

async fn live() -> Response {
    keel_platform::http::Json(json!({"status": "ok"})).into_response()
}

/// The platform's readiness check (the HTTP services' `/readyz`), without
/// background tasks: quotebot's cache is always Redis.
async fn ready(State(h): State<Health>) -> Response {
    let d = match h.phase() {
        Phase::Ready(d) => d,
        Phase::Starting(doing) => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                keel_platform::http::Json(
                    json!({"status": "starting", "checks": {"startup": doing}}),
                ),
            )
                .into_response();
        }
    };
    keel_platform::http::health::check(
        &d.db,
        &d.cache,
        None,
        keel_platform::http::health::Redis::Required,
    )
    .await
    .into_response()
}

pub fn router(health: Health, gateway: crate::gateway::Gateway) -> Router {
    let report = Router::new()
        .route("/api/health/gateway", get(crate::gateway::answer))
        .with_state(gateway);
    Router::new()
        .route("/api/health/live", get(live))
        .route("/api/health", get(ready))
        .with_state(health)
        .merge(report)
}

/// Binds `HOST:PORT`; without `HOST`, the IPv6 wildcard (which takes IPv4
/// too), or the IPv4 one where IPv6 is off.
pub async fn bind(host: Option<IpAddr>, port: u16) -> anyhow::Result<TcpListener> {
    let bind = |ip: IpAddr| TcpListener::bind(SocketAddr::new(ip, port));
    let listener = match host {
        Some(ip) => bind(ip).await,
        None => match bind(Ipv6Addr::UNSPECIFIED.into()).await {
            Ok(l) => Ok(l),
            Err(_) => bind(Ipv4Addr::UNSPECIFIED.into()).await,
        },
    };
    listener.map_err(|e| anyhow::anyhow!("PORT: cannot listen on port {port}: {e}"))
}

/// Serves until `stop`.
pub async fn serve(listener: TcpListener, router: Router, stop: CancellationToken) {
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(stop.cancelled_owned())
        .await;
    if let Err(e) = served {
        tracing::error!(error = %e, "the health listener failed");
    }
}
