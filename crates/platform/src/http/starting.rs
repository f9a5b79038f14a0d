//! What a service's listener answers while the process starts (opening
//! the database, migrating, which can wait minutes on a lock): `/healthz`
//! 200 at once, so an orchestrator's liveness probe does not replace a
//! container that is only waiting; `/readyz` 503 saying what the process
//! is doing. Any other request waits for the service (up to
//! `KEEL_START_HOLD_SECS`) and is then answered by it, as if it had come
//! a moment later: a load balancer that has not yet noticed a node
//! restarting (it restarts in a fraction of a second, less than a health
//! check's interval) gets answers, not errors. Only a start longer than
//! the hold (a migration waiting on a lock) answers 503 with `Retry-After`
//! in the service's own error shape. The listener is shared, so the
//! service's own router takes over on the same socket when it is ready.

use std::net::SocketAddr;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};

use super::error::{PlatformError, Render};
use super::{Json, health};

/// A listener several servers take turns on (the start-up one, then the
/// service's).
#[derive(Clone, Debug)]
pub struct SharedListener(Arc<TcpListener>);

impl SharedListener {
    pub fn new(listener: TcpListener) -> Self {
        Self(Arc::new(listener))
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl From<TcpListener> for SharedListener {
    fn from(listener: TcpListener) -> Self {
        Self::new(listener)
    }
}

impl axum::serve::Listener for SharedListener {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            match self.0.accept().await {
                Ok(conn) => return conn,
                // A connection that failed before it was accepted is the
                // client's problem; anything else (out of descriptors) is
                // waited out, as axum does.
                Err(e) if is_connection_error(&e) => {}
                Err(e) => {
                    tracing::error!(error = %e, "accept failed; retrying in 1 s");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

/// What the process is doing while it starts; cheap to clone.
#[derive(Clone, Debug)]
pub struct Startup(Arc<RwLock<String>>);

impl Startup {
    pub fn new(doing: &str) -> Self {
        Self(Arc::new(RwLock::new(doing.to_owned())))
    }

    /// Says what the process does now (`migrating`, ...).
    pub fn set(&self, doing: &str) {
        doing.clone_into(&mut self.0.write().unwrap_or_else(PoisonError::into_inner));
    }

    pub fn doing(&self) -> String {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The start-up router of a service that renders errors with `render`;
    /// its other requests wait up to `hold` for the service's own router
    /// from `takeover` and are answered by it.
    pub fn router(&self, render: Render, takeover: Takeover, hold: Duration) -> Router {
        Router::new()
            .route("/healthz", get(health::healthz))
            .route("/readyz", get(readyz))
            .fallback(move |req: Request| async move {
                tracing::debug!("holding a request until the service is ready");
                match takeover.ready(hold).await {
                    Some(router) => match tower::ServiceExt::oneshot(router, req).await {
                        Ok(resp) => resp,
                        Err(never) => match never {},
                    },
                    None => render(PlatformError::Starting),
                }
            })
            .with_state(self.clone())
    }
}

/// Where a start-up router gets the service's own router once it is built.
#[derive(Clone, Debug)]
pub struct Takeover(tokio::sync::watch::Receiver<Option<Router>>);

/// Hands a service's router to its start-up router's waiting requests.
#[derive(Debug)]
pub struct Handover(tokio::sync::watch::Sender<Option<Router>>);

/// A takeover and its handover.
pub fn takeover() -> (Handover, Takeover) {
    let (tx, rx) = tokio::sync::watch::channel(None);
    (Handover(tx), Takeover(rx))
}

impl Handover {
    /// The service is ready: waiting requests go to `router`.
    pub fn ready(&self, router: Router) {
        self.0.send_replace(Some(router));
    }
}

impl Takeover {
    /// The service's router once it is ready, if that is within `hold`.
    async fn ready(mut self, hold: Duration) -> Option<Router> {
        let ready = self.0.wait_for(Option::is_some);
        match tokio::time::timeout(hold, ready).await {
            Ok(Ok(router)) => router.clone(),
            _ => None,
        }
    }
}

async fn readyz(State(s): State<Startup>) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        Json(json!({"status": "starting", "checks": {"startup": s.doing()}})),
    )
        .into_response()
}
