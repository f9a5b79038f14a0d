//! `POST /api/webhooks/stream`: the provider's events.

use axum::extract::State;
use axum::http::HeaderMap;
use keel_platform::http::Json;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::domain::webhook::{self, Effect, Outcome};
use crate::error::{self, Error, ErrorBody};
use crate::input::RawBody;
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct Received {
    received: bool,
    /// What it did: `live_started`, `ended`, `viewers`, `nothing`,
    /// `duplicate`.
    effect: &'static str,
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// A provider event (`call.live_started`, the end of a stream, viewer
/// counts); signed with the API secret.
#[utoipa::path(post, path = "/api/webhooks/stream", tag = "webhooks",
    security(("webhook_key" = [], "webhook_signature" = [])),
    params(
        ("X-Webhook-Id" = Option<String>, Header, description = "The same on every retry of one delivery"),
    ),
    request_body(content = std::collections::HashMap<String, serde_json::Value>, description = "The provider's event JSON (may be gzip)"),
    responses(
        (status = 200, body = Received),
        (status = 400, description = "BAD_REQUEST: not JSON", body = ErrorBody),
        (status = 401, description = "UNAUTHORIZED: key or signature wrong or missing; nothing changed", body = ErrorBody),
        (status = 412, description = "PRECONDITION_FAILED: the provider is not configured", body = ErrorBody),
    ))]
pub async fn stream(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawBody(raw): RawBody,
) -> Result<Json<Received>, Error> {
    let (Some(key), Some(secret)) = (&state.cfg.stream.api_key, &state.cfg.stream.api_secret)
    else {
        return Err(Error::from(crate::getstream::ProviderError::NotConfigured(
            state.stream.missing(),
        )));
    };
    let body = webhook::verify(
        &raw,
        header(&headers, "x-signature"),
        header(&headers, "x-api-key"),
        key,
        secret.expose().as_bytes(),
    )?;
    let event: Value = serde_json::from_slice(&body).map_err(|e| error::event_not_json(&e))?;
    let delivery = header(&headers, "x-webhook-id");
    let outcome = webhook::receive(&state.platform.db, delivery, &event, &state.cfg.notify).await?;
    // Also after a duplicate: its first delivery may have committed and
    // failed before this node's snapshot took the change.
    state.live.publish().await;
    let effect = match outcome {
        Outcome::Duplicate => {
            return Ok(Json(Received {
                received: true,
                effect: "duplicate",
            }));
        }
        Outcome::Applied(effect) => effect,
    };
    let effect = match effect {
        Effect::LiveStarted(s) => {
            tracing::info!(session = %s, "the channel is live");
            "live_started"
        }
        Effect::Ended(s) => {
            tracing::info!(session = %s, "the live stream ended");
            "ended"
        }
        Effect::Viewers(_) => "viewers",
        Effect::Nothing => "nothing",
    };
    Ok(Json(Received {
        received: true,
        effect,
    }))
}
