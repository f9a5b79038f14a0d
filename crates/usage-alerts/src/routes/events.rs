//! POST /event.

use axum::extract::State;
use keel_platform::http::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::domain::event::{NewEvent, UsageEvent};
use crate::error::Error;
use crate::input::Body;
use crate::routes::failures::*;
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The user's cost for the current UTC day, this event included.
    total_cost: f64,
}

#[derive(Serialize, ToSchema)]
pub struct EventAccepted {
    success: bool,
    summary: Summary,
}

/// Store a usage event, update the day's totals and alert on crossed thresholds.
#[utoipa::path(post, path = "/event", tag = "usage-alerts", security(("identity" = [])),
    request_body = UsageEvent,
    responses(
        (status = 200, body = EventAccepted),
        InvalidField,
    ))]
pub async fn post_event(
    State(state): State<AppState>,
    me: Caller,
    Body(event): Body<UsageEvent>,
) -> Result<Json<EventAccepted>, Error> {
    let total_cost = state
        .ingestor
        .submit(NewEvent {
            user_id: me.user_id,
            event,
        })
        .await?;
    Ok(Json(EventAccepted {
        success: true,
        summary: Summary { total_cost },
    }))
}
