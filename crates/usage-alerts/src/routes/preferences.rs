//! GET and POST /preferences.

use axum::extract::State;
use keel_platform::http::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::domain::preferences::{self, UserPreferences};
use crate::domain::thresholds::{self, Preferences};
use crate::error::Error;
use crate::input::JsonObject;
use crate::routes::failures::*;
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct PreferencesResponse {
    /// `null` when none were configured.
    preferences: Option<UserPreferences>,
}

/// The caller's thresholds.
#[utoipa::path(get, path = "/preferences", tag = "usage-alerts", security(("identity" = [])),
    responses((status = 200, body = PreferencesResponse)))]
pub async fn get(
    State(state): State<AppState>,
    me: Caller,
) -> Result<Json<PreferencesResponse>, Error> {
    Ok(Json(PreferencesResponse {
        preferences: preferences::get(&state.db, &me.user_id).await?,
    }))
}

#[derive(Serialize, ToSchema)]
pub struct PreferencesSaved {
    success: bool,
    preferences: UserPreferences,
}

/// Replace the caller's thresholds.
#[utoipa::path(post, path = "/preferences", tag = "usage-alerts", security(("identity" = [])),
    request_body = Preferences,
    responses(
        (status = 200, body = PreferencesSaved),
        InvalidField,
    ))]
pub async fn set(
    State(state): State<AppState>,
    me: Caller,
    JsonObject(body): JsonObject,
) -> Result<Json<PreferencesSaved>, Error> {
    let wanted = thresholds::parse(&body)?;
    Ok(Json(PreferencesSaved {
        success: true,
        preferences: preferences::save(&state.db, &me.user_id, wanted.thresholds).await?,
    }))
}
