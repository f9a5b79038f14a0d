//! GET /status.

use axum::extract::State;
use keel_platform::http::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct Status {
    status: &'static str,
    /// keel's semantic version.
    version: &'static str,
    /// `development` or `production`.
    environment: &'static str,
}

/// Service status (no authentication).
#[utoipa::path(get, path = "/status", tag = "usage-alerts", responses((status = 200, body = Status)))]
pub async fn status(State(state): State<AppState>) -> Json<Status> {
    Json(Status {
        status: "ok",
        version: env!("CARGO_PKG_VERSION"),
        environment: state.environment.as_str(),
    })
}
