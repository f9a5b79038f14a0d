//! The usage-alerts route table: one file per resource.

mod account;
mod devices;
mod events;
mod failures;
pub mod history;
mod preferences;
mod status;

use keel_platform::http::openapi::{AuthFailures, HttpAuth};
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use utoipa::{Modify, OpenApi};

use crate::state::AppState;

/// How callers authenticate.
const AUTH: HttpAuth = HttpAuth::bearer_jwt("identity");

#[derive(OpenApi)]
#[openapi(
    modifiers(&AUTH),
    components(schemas(crate::error::ErrorBody)),
    tags((name = "usage-alerts", description = "Usage events, thresholds, devices"))
)]
struct ApiDoc;

pub fn router(state: AppState) -> OpenApiRouter {
    let mut router = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(status::status))
        .routes(routes!(devices::register, devices::unregister))
        .routes(routes!(devices::remove))
        .routes(routes!(devices::list))
        .routes(routes!(events::post_event))
        .routes(routes!(preferences::get, preferences::set))
        .routes(routes!(history::history))
        .routes(routes!(account::delete_account))
        .with_state(state);
    AuthFailures(&[(
        "401",
        "Missing or invalid identity token: {\"error\": \"Unauthorized\"}",
    )])
    .modify(router.get_openapi_mut());
    router
}
