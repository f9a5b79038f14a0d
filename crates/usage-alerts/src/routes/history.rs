//! GET /history.

use axum::extract::{Query, State};
use keel_platform::http::JsonBytes;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::domain::event::{self, StoredEvent};
use crate::error::{self, Error, ErrorBody};
use crate::state::AppState;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Page {
    /// Default 50, at most 500 (larger values are capped).
    #[param(value_type = Option<u64>, minimum = 0)]
    limit: Option<String>,
    /// Default 0.
    #[param(value_type = Option<u64>, minimum = 0)]
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

/// The body (written by `event::history_body`, which writes what serde
/// writes for this; tested).
#[derive(Serialize, ToSchema)]
pub struct History<'a> {
    pub events: Vec<StoredEvent<'a>>,
    pub limit: u64,
    pub offset: u64,
}

/// The caller's events, newest first.
#[utoipa::path(get, path = "/history", tag = "usage-alerts", security(("identity" = [])),
    params(Page),
    responses(
        (status = 200, body = History<'static>),
        (status = 400, description = "limit or offset is not a non-negative integer", body = ErrorBody),
    ))]
pub async fn history(
    State(state): State<AppState>,
    me: Caller,
    Query(page): Query<Page>,
) -> Result<JsonBytes, Error> {
    let limit = page_value(page.limit.as_deref(), "limit", 50)?;
    let offset = page_value(page.offset.as_deref(), "offset", 0)?;
    Ok(JsonBytes(
        event::history_body(&state.db, &me.user_id, limit, offset).await?,
    ))
}
