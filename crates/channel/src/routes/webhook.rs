//! `POST /api/webhooks/stream`: the provider's events.

use axum::extract::State;
use axum::http::HeaderMap;
use chrono::Utc;
use keel_platform::http::Json;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, QueryFilter, Set};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::domain::channel;
use crate::domain::webhook::{self, Effect, WebhookError};
use crate::entity::webhook_seen;
use crate::error::{Envelope, Error, trpc};
use crate::getstream::CALL_TYPE;
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
    params(
        ("X-Signature" = String, Header, description = "hex HMAC-SHA256 of the raw (uncompressed) body with the API secret"),
        ("X-Api-Key" = String, Header, description = "The app's API key"),
        ("X-Webhook-Id" = Option<String>, Header, description = "The same on every retry of one delivery"),
    ),
    request_body(content = Object, description = "The provider's event JSON (may be gzip)"),
    responses(
        (status = 200, body = Received),
        (status = 400, description = "BAD_REQUEST: not JSON", body = Envelope),
        (status = 401, description = "UNAUTHORIZED: key or signature wrong or missing; nothing changed", body = Envelope),
        (status = 412, description = "PRECONDITION_FAILED: the provider is not configured", body = Envelope),
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
    )
    .map_err(|e| match e {
        WebhookError::Unauthorized(why) => trpc("UNAUTHORIZED", why),
        WebhookError::BadBody(why) => trpc("BAD_REQUEST", why),
    })?;
    let event: Value = serde_json::from_slice(&body)
        .map_err(|e| trpc("BAD_REQUEST", format!("The event is not JSON: {e}")))?;
    let db = &state.platform.db;
    if let Some(id) = header(&headers, "x-webhook-id").filter(|id| id.len() <= 100) {
        let inserted = webhook_seen::Entity::insert(webhook_seen::ActiveModel {
            webhook_id: Set(id.to_owned()),
            received_at: Set(Utc::now()),
        })
        .on_conflict(
            OnConflict::column(webhook_seen::Column::WebhookId)
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(db.write())
        .await?;
        if inserted == 0 {
            return Ok(Json(Received {
                received: true,
                effect: "duplicate",
            }));
        }
        webhook_seen::Entity::delete_many()
            .filter(webhook_seen::Column::ReceivedAt.lt(Utc::now() - chrono::Duration::days(2)))
            .exec(db.write())
            .await?;
    }
    let ours = channel::config(db)
        .await?
        .stream_call_id
        .map(|id| format!("{CALL_TYPE}:{id}"));
    let effect = webhook::apply(db, ours.as_deref(), &event, &state.cfg.notify).await?;
    if effect != Effect::Nothing {
        state.live.publish().await?;
    }
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
