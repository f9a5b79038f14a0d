//! The svc route table (everything under `<REST root>/svc/v1`).

pub mod admin;
pub mod public;

use axum::middleware;
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::cors;
use crate::state::AppState;

#[derive(OpenApi)]
#[openapi(
    modifiers(&Security),
    tags(
        (name = "forms", description = "Form API (App Check)"),
        (name = "admin", description = "Host-site administration (svc_manage)"),
        (name = "push", description = "Push API: device registration (push token or App Check) and sending (svc_manage)"),
    )
)]
struct ApiDoc;

struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let c = doc.components.get_or_insert_with(Default::default);
        c.add_security_scheme(
            "app_password",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Basic).build()),
        );
    }
}

/// The namespace's routes, relative to its base.
pub fn router(state: AppState) -> OpenApiRouter {
    let public = OpenApiRouter::new()
        .routes(routes!(public::fields, public::fields_preflight))
        .routes(routes!(public::submit, public::submit_preflight))
        .layer(middleware::from_fn_with_state(state.clone(), cors::layer));
    let site_admin = OpenApiRouter::new()
        .routes(routes!(admin::login))
        .routes(routes!(admin::logout))
        .routes(routes!(admin::get_settings, admin::patch_settings))
        .routes(routes!(admin::list_forms, admin::create_form))
        .routes(routes!(
            admin::get_form,
            admin::put_form,
            admin::delete_form
        ))
        .routes(routes!(admin::list_submissions))
        .routes(routes!(admin::export_submissions))
        .routes(routes!(admin::audit_log));
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(public)
        .merge(site_admin)
        .merge(crate::push::routes::router(state.clone()))
        .with_state(state)
}
