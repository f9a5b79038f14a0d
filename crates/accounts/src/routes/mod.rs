//! The accounts route table.

mod account;
mod auth;
mod goals;

use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::state::AppState;

#[derive(OpenApi)]
#[openapi(
    modifiers(&BearerAuth),
    tags(
        (name = "auth", description = "Registration, login, token refresh, logout, email verification"),
        (name = "account", description = "Account self-service"),
        (name = "goals", description = "Weekly and yearly goals"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .build(),
            ),
        );
    }
}

pub fn router(state: AppState) -> OpenApiRouter {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(auth::register))
        .routes(routes!(auth::login))
        .routes(routes!(auth::refresh))
        .routes(routes!(auth::logout))
        .routes(routes!(auth::verify_email))
        .routes(routes!(account::get_account))
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
        .routes(routes!(goals::list_yearly, goals::create_yearly))
        .routes(routes!(goals::get_yearly, goals::delete_yearly))
        .with_state(state)
}
