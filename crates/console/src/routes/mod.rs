//! The console's route table (everything under `/console/v1`): one file
//! per resource; the areas the services added are merged behind the same
//! sign-in layer.

mod audit;
mod health;
mod jobs;
mod operators;
mod session;

use axum::middleware;
use keel_platform::console::Area;
use keel_platform::http::openapi::{KeyAuth, KeyIn};
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use utoipa::OpenApi;

use crate::state::AppState;

/// Every credential check of the console, at the platform's guard.
pub const DOORS: &[keel_platform::guard::Door] = &[crate::domain::sign_in::DOOR];

const SESSION: KeyAuth = KeyAuth {
    name: "console_session",
    key_in: KeyIn::Cookie,
    key: crate::auth::SESSION.plain,
    description: "The session POST /console/v1/session sets (`__Host-keel_console` over HTTPS)",
};
const CSRF: KeyAuth = KeyAuth {
    name: "console_csrf",
    key_in: KeyIn::Header,
    key: "X-Console-Csrf",
    description: "The session's CSRF token (POST /console/v1/session answers it), on every request that changes something",
};

#[derive(OpenApi)]
#[openapi(
    modifiers(&SESSION, &CSRF),
    tags(
        (name = "session", description = "Signing in (password and TOTP code) and out"),
        (name = "health", description = "keel and its dependencies"),
        (name = "jobs", description = "The job queue (the jobs role)"),
        (name = "audit", description = "What every operator and admin did"),
        (name = "users", description = "accounts' users (the users role)"),
        (name = "operators", description = "The console's operators (the operators role)"),
        (name = "push", description = "svc's push notifications: sends and devices (the push role); svc's own routes, answering as svc does"),
        (name = "forms", description = "svc's settings, forms and submissions (the forms role); svc's own routes, answering as svc does"),
        (name = "svc-admins", description = "svc's own users, who sign in to its API (the operators role); svc's own routes, answering as svc does"),
    )
)]
struct ApiDoc;

/// The console's routes and the services' areas.
pub fn router(state: AppState, areas: Vec<Area>) -> OpenApiRouter {
    let mut signed_in = OpenApiRouter::new()
        .routes(routes!(session::whoami, session::sign_out))
        .routes(routes!(health::health))
        .routes(routes!(audit::list))
        .routes(routes!(audit::export))
        .routes(routes!(jobs::list))
        .routes(routes!(jobs::retry))
        .routes(routes!(jobs::discard))
        .routes(routes!(jobs::retry_kind))
        .routes(routes!(jobs::discard_kind))
        .routes(routes!(operators::list, operators::add))
        .routes(routes!(operators::set_roles))
        .routes(routes!(operators::disable))
        .routes(routes!(operators::enable))
        .routes(routes!(operators::remove))
        .routes(routes!(operators::end_sessions))
        .with_state(state.clone());
    for area in areas {
        signed_in = signed_in.merge(area.routes);
    }
    let signed_in = signed_in.layer(middleware::from_fn_with_state(
        state.clone(),
        crate::auth::signed_in,
    ));
    let open = OpenApiRouter::new()
        .routes(routes!(session::sign_in))
        .with_state(state);
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(open)
        .merge(signed_in)
}
