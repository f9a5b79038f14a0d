//! channel-api's route table: tRPC, the auth routes, the provider webhook,
//! the logo. One file per resource; the procedures in `procedures/`.

mod auth;
mod failures;
mod logo;

/// The largest body a route takes (the logo upload).
pub const LOGO_BODY_LIMIT: usize = logo::BODY_LIMIT;

/// Every route that checks a credential, at the platform's guard.
pub const DOORS: &[keel_platform::guard::Door] = &[auth::SIGN_IN, procedures::setup::SETUP];
pub mod procedures;
mod webhook;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use keel_platform::http::openapi::{KeyAuth, KeyIn};
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use utoipa::OpenApi;

use crate::state::AppState;
use crate::trpc;

/// The owner's session cookie (sign-in and `setup.complete` set it).
pub const SESSION: KeyAuth = KeyAuth {
    name: "session",
    key_in: KeyIn::Cookie,
    key: crate::auth::COOKIE_NAME,
    description: "The owner's session; a change must also come from the channel's own origin",
};
/// The provider's webhook: its key and its body's signature.
const WEBHOOK_KEY: KeyAuth = KeyAuth {
    name: "webhook_key",
    key_in: KeyIn::Header,
    key: "X-Api-Key",
    description: "The GetStream app's API key",
};
const WEBHOOK_SIGNATURE: KeyAuth = KeyAuth {
    name: "webhook_signature",
    key_in: KeyIn::Header,
    key: "X-Signature",
    description: "Hex HMAC-SHA256 of the raw (uncompressed) body with the API secret",
};

#[derive(OpenApi)]
#[openapi(
    modifiers(&SESSION, &WEBHOOK_KEY, &WEBHOOK_SIGNATURE),
    components(schemas(crate::error::ErrorBody)),
    tags(
        (name = "trpc", description = "tRPC procedures (GET queries with ?input=, POST mutations; ?batch=1)"),
        (name = "auth", description = "The owner's session cookie"),
        (name = "webhooks", description = "The streaming provider's events"),
        (name = "logo", description = "The channel's logo"),
    )
)]
struct ApiDoc;

/// What the document says of every procedure.
const DESCRIBE: trpc::doc::Describe = trpc::doc::Describe {
    security_scheme: SESSION.name,
    signed_in: "The signed-in owner",
    errors: "Errors come in tRPC's envelope (BAD_REQUEST naming the field, UNAUTHORIZED, PRECONDITION_FAILED when the provider is not configured or the stream not provisioned, BAD_GATEWAY when the provider fails).",
};

pub fn router(state: AppState) -> OpenApiRouter {
    let procedures = Arc::new(procedures::all());
    let settings = trpc::Settings {
        max_batch: state.cfg.max_batch,
        transformer: if state.cfg.superjson {
            trpc::Transformer::Superjson
        } else {
            trpc::Transformer::None
        },
    };
    let upload = OpenApiRouter::new()
        .routes(routes!(logo::upload))
        .layer(DefaultBodyLimit::max(logo::BODY_LIMIT));
    let mut router = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(auth::sign_in))
        .routes(routes!(auth::sign_out))
        .routes(routes!(auth::session))
        .routes(routes!(webhook::stream))
        .routes(routes!(logo::get))
        .merge(upload)
        .route(
            "/api/trpc/{*procedures}",
            trpc::route(procedures.clone(), settings),
        );
    trpc::doc::document(router.get_openapi_mut(), &procedures, &DESCRIBE);
    router.with_state(state)
}
