//! The health listener (`PORT`, default 3000; every interface, IPv4 and
//! IPv6, unless `HOST` names one):
//! - `GET /api/health/live`: 200 `{"status":"ok"}`, no dependency, so a
//!   short database or Redis outage does not get the container replaced;
//! - `GET /api/health`: 200 `{"status":"ok","checks":{"database":"ok","redis":"ok"}}`
//!   when both answer within 2 seconds, else 503 with `"status":"unavailable"`
//!   and the failing check saying what is wrong; it recovers by itself.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use axum::Router;
use axum::extract::State;
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

async fn live() -> Response {
    keel_platform::http::Json(json!({"status": "ok"})).into_response()
}

/// The platform's readiness check (the HTTP services' `/readyz`), without
/// background tasks: quotebot's cache is always Redis.
async fn ready(State(d): State<Deps>) -> Response {
    keel_platform::http::health::check(
        &d.db,
        &d.cache,
        None,
        keel_platform::http::health::Redis::Required,
    )
    .await
    .into_response()
}

pub fn router(db: Db, cache: Cache) -> Router {
    Router::new()
        .route("/api/health/live", get(live))
        .route("/api/health", get(ready))
        .with_state(Deps { db, cache })
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
