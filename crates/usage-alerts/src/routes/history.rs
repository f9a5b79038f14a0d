//! GET /history.

use axum::Json;
use axum::extract::{Query, State};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::domain::event::{self, MAX_LIMIT, StoredEvent};
use crate::error::{self, Error, ErrorBody};
use crate::state::AppState;

#[derive(Deserialize, IntoParams)]
pub struct Page {
    /// Default 50, at most 500 (larger values are capped).
    limit: Option<String>,
    /// Default 0.
    offset: Option<String>,
}

fn page_value(raw: Option<&str>, field: &str, default: u64) -> Result<u64, Error> {
    match raw {
        None | Some("") => Ok(default),
        Some(v) => v
            .trim()
            .parse::<u64>()
            .map_err(|_| error::invalid(field, "must be a non-negative integer")),
    }
}

#[derive(Serialize, ToSchema)]
pub struct History {
    events: Vec<StoredEvent>,
    limit: u64,
    offset: u64,
}

/// The caller's events, newest first.
#[utoipa::path(get, path = "/history", tag = "usage-alerts", security(("identity" = [])),
    params(Page),
    responses(
        (status = 200, body = History),
        (status = 400, description = "limit or offset is not a non-negative integer", body = ErrorBody),
    ))]
pub async fn history(
    State(state): State<AppState>,
    me: Caller,
    Query(page): Query<Page>,
) -> Result<Json<History>, Error> {
    let limit = page_value(page.limit.as_deref(), "limit", 50)?.min(MAX_LIMIT);
    let offset = page_value(page.offset.as_deref(), "offset", 0)?;
    Ok(Json(History {
        events: event::history(&state.db, &me.user_id, limit, offset).await?,
        limit,
        offset,
    }))
}
