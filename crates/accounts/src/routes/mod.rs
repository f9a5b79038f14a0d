//! The accounts route table.

mod account;
mod auth;
mod failures;
mod goals;
mod lifecycle;
mod limits;
mod passkeys;
mod well_known;
mod yearly;

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
        .routes(routes!(passkeys::sign_in_options))
        .routes(routes!(passkeys::sign_in))
        .routes(routes!(passkeys::list, passkeys::finish_registration))
        .routes(routes!(passkeys::start_registration))
        .routes(routes!(passkeys::rename, passkeys::delete))
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
    router
}
