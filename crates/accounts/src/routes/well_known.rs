//! The files that let an iOS or Android app use the site's passkeys:
//! `apple-app-site-association` (webcredentials) and `assetlinks.json`
//! (login credentials), made from configuration; 404 when no app is set.

use axum::extract::State;
use keel_platform::http::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct AppleAppSiteAssociation {
    webcredentials: WebCredentials,
}

#[derive(Serialize, ToSchema)]
pub struct WebCredentials {
    /// `TEAMID.bundle.id` of each app.
    apps: Vec<String>,
}

/// A Digital Asset Links statement: the app may use the site's sign-in
/// credentials (and open its links).
#[derive(Serialize, ToSchema)]
pub struct AssetStatement {
    relation: Vec<&'static str>,
    target: AssetTarget,
}

#[derive(Serialize, ToSchema)]
pub struct AssetTarget {
    /// `android_app`.
    namespace: &'static str,
    package_name: String,
    /// The signing certificate's SHA-256, `AB:CD:...`.
    sha256_cert_fingerprints: Vec<String>,
}

/// The iOS apps that share this site's passkeys.
#[utoipa::path(get, path = "/.well-known/apple-app-site-association", tag = "passkeys",
    responses(
        (status = 200, body = AppleAppSiteAssociation),
        (status = 404, description = format!("{NOT_FOUND}: no iOS app is configured"), body = ErrorBody),
    ))]
pub async fn apple_app_site_association(
    State(state): State<AppState>,
) -> Result<Json<AppleAppSiteAssociation>, Error> {
    let apps = state
        .cfg
        .passkeys
        .as_ref()
        .map(|p| p.apple_app_ids.clone())
        .filter(|a| !a.is_empty())
        .ok_or_else(|| error::no_association("iOS"))?;
    Ok(Json(AppleAppSiteAssociation {
        webcredentials: WebCredentials { apps },
    }))
}

/// The Android apps that share this site's passkeys.
#[utoipa::path(get, path = "/.well-known/assetlinks.json", tag = "passkeys",
    responses(
        (status = 200, description = "Digital Asset Links statements: each app may handle the site's URLs and use its sign-in credentials", body = Vec<AssetStatement>),
        (status = 404, description = format!("{NOT_FOUND}: no Android app is configured"), body = ErrorBody),
    ))]
pub async fn asset_links(
    State(state): State<AppState>,
) -> Result<Json<Vec<AssetStatement>>, Error> {
    let apps = state
        .cfg
        .passkeys
        .as_ref()
        .map(|p| &p.android_apps)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| error::no_association("Android"))?;
    let statements = apps
        .iter()
        .map(|a| AssetStatement {
            relation: vec![
                "delegate_permission/common.handle_all_urls",
                "delegate_permission/common.get_login_creds",
            ],
            target: AssetTarget {
                namespace: "android_app",
                package_name: a.package.clone(),
                sha256_cert_fingerprints: vec![a.fingerprint.clone()],
            },
        })
        .collect();
    Ok(Json(statements))
}
