//! The accounts route table.

mod account;
mod auth;
mod failures;
mod goals;
mod lifecycle;
pub(crate) use lifecycle::{AccountExport, export_of};
mod limits;
mod passkeys;
mod proof;
mod webauthn_json;
mod well_known;
mod yearly;

pub use limits::DOORS;

use keel_platform::http::openapi::{AuthFailures, HttpAuth};
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use utoipa::{Modify, OpenApi};

use crate::state::AppState;

/// How callers authenticate.
const AUTH: HttpAuth = HttpAuth::bearer_jwt("bearer");

#[derive(OpenApi)]
#[openapi(
    modifiers(&AUTH),
    components(schemas(crate::error::ErrorBody)),
    tags(
        (name = "auth", description = "Registration, login, token refresh, logout, email verification"),
        (name = "account", description = "Account self-service"),
        (name = "goals", description = "Weekly and yearly goals"),
        (name = "passkeys", description = "A user's passkeys (WebAuthn); signing in with one is under auth"),
    )
)]
struct ApiDoc;

/// The association files for native apps, at the host's root.
pub fn well_known(state: AppState) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(well_known::apple_app_site_association))
        .routes(routes!(well_known::asset_links))
        .with_state(state)
}

pub fn router(state: AppState) -> OpenApiRouter {
    let mut router = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(auth::register))
        .routes(routes!(auth::login))
        .routes(routes!(auth::refresh))
        .routes(routes!(auth::logout))
        .routes(routes!(auth::verify_email))
        .routes(routes!(passkeys::passkey_sign_in_options))
        .routes(routes!(passkeys::passkey_sign_in))
        .routes(routes!(passkeys::list_passkeys, passkeys::add_passkey))
        .routes(routes!(passkeys::start_passkey_registration))
        .routes(routes!(passkeys::rename_passkey, passkeys::delete_passkey))
        .routes(routes!(account::get_account, lifecycle::delete_account))
        .routes(routes!(lifecycle::export_account))
        .routes(routes!(
            lifecycle::get_notifications,
            lifecycle::put_notifications
        ))
        .routes(routes!(lifecycle::unsubscribe, lifecycle::unsubscribe_page))
        .routes(routes!(
            account::start_two_factor,
            account::confirm_two_factor,
            account::disable_two_factor
        ))
        .routes(routes!(account::backup_codes))
        .routes(routes!(account::change_email))
        .routes(routes!(account::resend_email_change))
        .routes(routes!(account::confirm_email_change))
        .routes(routes!(account::change_password))
        .routes(routes!(account::change_username))
        .routes(routes!(
            account::list_sessions,
            account::revoke_all_sessions
        ))
        .routes(routes!(account::revoke_session))
        .routes(routes!(goals::list_weekly, goals::create_weekly))
        .routes(routes!(goals::get_weekly, goals::delete_weekly))
        .routes(routes!(goals::complete_weekly))
        .routes(routes!(goals::uncomplete_weekly))
        .routes(routes!(yearly::list_yearly, yearly::create_yearly))
        .routes(routes!(yearly::get_yearly, yearly::delete_yearly))
        .routes(routes!(yearly::link_weekly, yearly::unlink_weekly))
        .with_state(state);
    AuthFailures(&[("401", "UNAUTHORIZED: no valid access token")])
        .modify(router.get_openapi_mut());
    body_optional(router.get_openapi_mut(), "/auth/passkey/options");
    router
}

/// utoipa marks a request body required whenever its type is not an
/// `Option` (which would also admit `null`); a body whose fields are all
/// optional may be left out (an empty body reads as `{}`).
fn body_optional(doc: &mut utoipa::openapi::OpenApi, path: &str) {
    let op = doc.paths.paths.get_mut(path).and_then(|p| p.post.as_mut());
    if let Some(utoipa::openapi::RefOr::T(body)) = op.and_then(|op| op.request_body.as_mut()) {
        body.required = Some(utoipa::openapi::Required::False);
    }
}
