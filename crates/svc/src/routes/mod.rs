//! The svc route table (everything under `<REST root>/svc/v1`): one file
//! per resource.

mod admins;
mod app_passwords;
pub mod areas;
mod audit;
mod cors;
mod failures;
mod form_api;
mod login;

/// Every credential check of the service, at the platform's guard.
pub const DOORS: &[keel_platform::guard::Door] = &[login::LOGIN, crate::auth::APP_PASSWORD];
mod paging;
mod push_admin;
mod push_device_list;
mod push_devices;
mod push_sends;
mod settings;
mod site_forms;
mod submissions;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use keel_platform::http::openapi::{HttpAuth, KeyAuth, KeyIn};
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use crate::error::{Error, no_route};
use crate::state::AppState;

pub use form_api::APPCHECK_HEADER;

/// How callers authenticate: an admin by application password (HTTP
/// Basic) or by the session cookie with its nonce; an app by its App Check
/// token.
const AUTH: HttpAuth = HttpAuth::basic("app_password");
const SESSION: KeyAuth = KeyAuth {
    name: "session_cookie",
    key_in: KeyIn::Cookie,
    key: crate::auth::SESSION.plain,
    description: "The admin session POST /admin/login sets; every request with it also needs the nonce",
};
const NONCE: KeyAuth = KeyAuth {
    name: "nonce",
    key_in: KeyIn::Header,
    key: "X-Svc-Nonce",
    description: "The session's nonce (POST /admin/login answers it); or `_wpnonce` in the query string",
};
const APP_CHECK: KeyAuth = KeyAuth {
    name: "app_check",
    key_in: KeyIn::Header,
    key: "X-Vendor-AppCheck",
    description: "A Firebase App Check token of an allowed app (POST /submit also takes the legacy body field `app_check_token`)",
};

#[derive(OpenApi)]
#[openapi(
    modifiers(&AUTH, &SESSION, &NONCE, &APP_CHECK),
    tags(
        (name = "forms", description = "Form API (App Check)"),
        (name = "admin", description = "Host-site administration (svc_manage)"),
        (name = "push", description = "Push API: device registration (push token or App Check) and sending (svc_manage)"),
    )
)]
struct ApiDoc;

/// The namespace's routes, relative to its base.
pub fn router(state: AppState) -> OpenApiRouter {
    let public = OpenApiRouter::new()
        .routes(routes!(form_api::fields, form_api::fields_preflight))
        .routes(routes!(form_api::submit, form_api::submit_preflight))
        .layer(middleware::from_fn_with_state(state.clone(), cors::layer));
    let site_admin = OpenApiRouter::new()
        .routes(routes!(login::login))
        .routes(routes!(login::logout))
        .merge(forms_admin())
        .routes(routes!(audit::audit_log))
        .routes(routes!(
            app_passwords::list_app_passwords,
            app_passwords::create_app_password
        ))
        .routes(routes!(app_passwords::revoke_app_password))
        .merge(users_admin());
    let push = OpenApiRouter::new()
        .routes(routes!(push_devices::register, push_devices::unregister))
        .routes(routes!(push_devices::registration_status))
        .merge(push_admin(&state))
        .layer(middleware::from_fn_with_state(state.clone(), push_switch));
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(public)
        .merge(site_admin)
        .merge(push)
        .with_state(state)
}

/// Settings, forms and their submissions: the site's administration, as
/// svc's admins and the console's forms role both reach it.
pub fn forms_admin() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(settings::get_settings, settings::patch_settings))
        .routes(routes!(site_forms::list_forms, site_forms::create_form))
        .routes(routes!(
            site_forms::get_form,
            site_forms::put_form,
            site_forms::delete_form
        ))
        .routes(routes!(submissions::list_submissions))
        .routes(routes!(submissions::export_submissions))
}

/// svc's own users (who may sign in to its API), as its admins holding
/// `svc_manage_admins` and the console's operators role both reach them.
pub fn users_admin() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(admins::list_users))
        .routes(routes!(admins::disable_user))
        .routes(routes!(admins::enable_user))
        .routes(routes!(admins::reset_password))
        .routes(routes!(admins::end_sessions))
        .routes(routes!(admins::remove_user))
}

/// Sending and the device list, as svc's admins and the console's push
/// role both reach them (behind [`push_switch`]).
pub fn push_admin(state: &AppState) -> OpenApiRouter<AppState> {
    let import = OpenApiRouter::new()
        .routes(routes!(push_admin::import_devices))
        .layer(DefaultBodyLimit::max(state.cfg.expo.import_limit));
    OpenApiRouter::new()
        .routes(routes!(push_sends::send_notification))
        .routes(routes!(push_sends::get_send, push_sends::cancel_send))
        .routes(routes!(push_sends::list_sends))
        .routes(routes!(push_sends::count_recipients))
        .routes(routes!(push_admin::push_stats))
        .routes(routes!(push_admin::export_devices))
        .routes(routes!(push_device_list::list_devices))
        .merge(import)
}

/// The push module switched off: every push route is 404.
pub async fn push_switch(State(state): State<AppState>, req: Request, next: Next) -> Response {
    match state.settings.get().await {
        Ok(s) if s.push_enabled => next.run(req).await,
        Ok(_) => no_route().into_response(),
        Err(e) => Error::from(e).into_response(),
    }
}

#[derive(Serialize, ToSchema)]
pub struct Done {
    success: bool,
}

impl Done {
    pub const OK: Self = Self { success: true };
}

/// A CSV download streaming `chunks` (a page at a time, so memory does
/// not grow with the rows).
pub fn download<S>(filename: &str, chunks: S) -> Response
where
    S: Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
{
    (
        [
            (CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                CONTENT_DISPOSITION,
                format!("attachment; filename=\"{filename}\""),
            ),
            (CACHE_CONTROL, "private, no-store".to_owned()),
        ],
        keel_platform::http::stream_body(chunks),
    )
        .into_response()
}
