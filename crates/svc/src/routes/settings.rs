//! GET and PATCH /admin/settings.

use axum::extract::State;
use axum::http::HeaderMap;
use keel_platform::http::Json;
use keel_platform::http::input::{self, Formats};
use serde_json::Value;

use crate::auth::Admin;
use crate::domain::settings::{SettingsPatch, SettingsView};
use crate::error::code::*;
use crate::error::{Error, ErrorBody};
use crate::input::RawBody;
use crate::routes::failures::*;
use crate::state::AppState;

/// The site settings.
#[utoipa::path(get, path = "/admin/settings", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    responses((status = 200, body = SettingsView), NotAdmin))]
pub async fn get_settings(
    State(state): State<AppState>,
    _admin: Admin,
) -> Result<Json<SettingsView>, Error> {
    Ok(Json(state.settings.get().await?.as_ref().into()))
}

/// Change settings (only the given ones); effective at once.
#[utoipa::path(patch, path = "/admin/settings", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    request_body(content = Option<SettingsPatch>, description = "The settings to change; `null` or no body: nothing changes"),
    responses(
        (status = 200, body = SettingsView),
        (status = 400, description = REST_INVALID_PARAM, body = ErrorBody),
        NotAdmin,
    ))]
pub async fn patch_settings(
    State(state): State<AppState>,
    admin: Admin,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<Json<SettingsView>, Error> {
    let patch = match input::parse(&headers, body, Formats::JSON).await? {
        Value::Null => SettingsPatch::default(),
        value => input::from_value(value)?,
    };
    // New debug tokens change nothing the view shows when as many are given.
    let tokens_given = patch.appcheck_debug_tokens.is_some();
    let before = SettingsView::from(state.settings.get().await?.as_ref());
    let after = SettingsView::from(state.settings.update(patch).await?.as_ref());
    if let Some(entry) = SettingsView::changes(&before, &after, tokens_given) {
        admin.record(&state, entry).await;
    }
    Ok(Json(after))
}
