//! GET /history.

use axum::extract::State;
use keel_platform::http::JsonBytes;
use keel_platform::http::openapi::{whole_number, whole_number_to};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::domain::event::{self, MAX_LIMIT, MAX_OFFSET, StoredEvent};
use crate::error::{self, Error, ErrorBody};
use crate::input::Params;
use crate::state::AppState;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Page {
    /// Default 50; a value above 500 is served as 500.
    #[param(schema_with = whole_number)]
    limit: Option<String>,
    /// Default 0, at most 1,000,000,000.
    #[param(schema_with = offset_schema)]
    offset: Option<String>,
}

fn offset_schema() -> utoipa::openapi::schema::Object {
    whole_number_to(MAX_OFFSET)
}

/// `raw` as a whole number, `default` when absent; `None` for a number too
/// large for `u64` (which every bound below it refuses or caps).
fn whole(raw: Option<&str>, field: &str, default: u64) -> Result<Option<u64>, Error> {
    let Some(v) = raw else {
        return Ok(Some(default));
    };
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(error::invalid(field, "must be a non-negative integer"));
    }
    Ok(v.parse::<u64>().ok())
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
        (status = 400, description = "limit or offset is not a non-negative integer, or offset is above 1,000,000,000", body = ErrorBody),
    ))]
pub async fn history(
    State(state): State<AppState>,
    me: Caller,
    Params(page): Params<Page>,
) -> Result<JsonBytes, Error> {
    let limit = whole(page.limit.as_deref(), "limit", 50)?.map_or(MAX_LIMIT, |l| l.min(MAX_LIMIT));
    let offset = whole(page.offset.as_deref(), "offset", 0)?
        .filter(|o| *o <= MAX_OFFSET)
        .ok_or_else(|| error::invalid("offset", "must be at most 1000000000"))?;
    Ok(JsonBytes(
        event::history_body(&state.db, &me.user_id, limit, offset).await?,
    ))
}
