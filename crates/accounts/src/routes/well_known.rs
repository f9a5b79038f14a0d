//! The files that let an iOS or Android app use the site's passkeys:
//! `apple-app-site-association` (webcredentials) and `assetlinks.json`
//! (login credentials), made from configuration; 404 when no app is set.

use axum::extract::State;
use keel_platform::http::Json;
use serde_json::{Value, json};

use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::state::AppState;

/// The iOS apps that share this site's passkeys.
#[utoipa::path(get, path = "/.well-known/apple-app-site-association", tag = "passkeys",
    responses(
        (status = 200, description = r#"{"webcredentials": {"apps": ["TEAMID.bundle.id", ...]}}"#, body = Object),
        (status = 404, description = format!("{NOT_FOUND}: no iOS app is configured"), body = ErrorBody),
    ))]
pub async fn apple_app_site_association(
    State(state): State<AppState>,
) -> Result<Json<Value>, Error> {
    let apps = state
        .cfg
        .passkeys
        .as_ref()
        .map(|p| p.apple_app_ids.clone())
        .filter(|a| !a.is_empty())
        .ok_or_else(|| error::no_association("iOS"))?;
    Ok(Json(json!({ "webcredentials": { "apps": apps } })))
}

/// The Android apps that share this site's passkeys.
#[utoipa::path(get, path = "/.well-known/assetlinks.json", tag = "passkeys",
    responses(
        (status = 200, description = "Digital Asset Links statements: each app may handle the site's URLs and use its sign-in credentials", body = Object),
        (status = 404, description = format!("{NOT_FOUND}: no Android app is configured"), body = ErrorBody),
    ))]
pub async fn asset_links(State(state): State<AppState>) -> Result<Json<Value>, Error> {
    let apps = state
        .cfg
        .passkeys
        .as_ref()
        .map(|p| &p.android_apps)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| error::no_association("Android"))?;
    let statements: Vec<Value> = apps
        .iter()
        .map(|a| {
            json!({
                "relation": [
                    "delegate_permission/common.handle_all_urls",
                    "delegate_permission/common.get_login_creds"
                ],
                "target": {
                    "namespace": "android_app",
                    "package_name": a.package,
                    "sha256_cert_fingerprints": [a.fingerprint]
                }
            })
        })
        .collect();
    Ok(Json(Value::Array(statements)))
}
