//! The fake's REST API under `/api/v10`: the bot token checked, scripted
//! lookups, commands, channel messages and interaction callbacks.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{APPLICATION_ID, Inner, Lookup, Message, payloads};
use crate::lock;

pub(super) fn authorized(inner: &Inner, headers: &HeaderMap) -> bool {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bot "))
        .is_some_and(|t| t == inner.token)
}

pub(super) async fn bot_token(
    State(inner): State<Arc<Inner>>,
    req: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    if !authorized(&inner, req.headers()) {
        return unauthorized();
    }
    next.run(req).await
}

pub(super) fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        axum::Json(json!({"message": "401: Unauthorized", "code": 0})),
    )
        .into_response()
}

pub(super) async fn gateway_bot(State(inner): State<Arc<Inner>>, headers: HeaderMap) -> Response {
    *lock(&inner.lookups) += 1;
    if !authorized(&inner, &headers) {
        return unauthorized();
    }
    let next = {
        let mut s = lock(&inner.lookup_script);
        (!s.is_empty()).then(|| s.remove(0))
    };
    match next {
        Some(Lookup::RateLimited(secs)) => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", format!("{}", secs.ceil()))],
            axum::Json(json!({"message": "You are being rate limited.", "retry_after": secs, "global": false})),
        )
            .into_response(),
        Some(Lookup::Status(s)) => (
            StatusCode::from_u16(s).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            axum::Json(json!({"message": "scripted", "code": 0})),
        )
            .into_response(),
        None => {
            let addr = lock(&inner.advertised).clone();
            axum::Json(json!({
                "url": format!("ws://{addr}"),
                "shards": *lock(&inner.shards),
                "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 14_400_000, "max_concurrency": 1},
            }))
            .into_response()
        }
    }
}

/// What the bot did, for a test outside the process (the container test).
pub(super) async fn state(State(inner): State<Arc<Inner>>) -> Response {
    let sessions = lock(&inner.conns)
        .iter()
        .filter(|c| c.shard.is_some())
        .count();
    axum::Json(json!({
        "sessions": sessions,
        "identifies": lock(&inner.identifies).len(),
        "commands": lock(&inner.commands).len(),
        "lookups": *lock(&inner.lookups),
    }))
    .into_response()
}

pub(super) async fn set_commands(
    State(inner): State<Arc<Inner>>,
    Path(app): Path<u64>,
    body: Bytes,
) -> Response {
    let Ok(Value::Array(cmds)) = serde_json::from_slice::<Value>(&body) else {
        return invalid_form();
    };
    let answer: Vec<Value> = cmds
        .iter()
        .enumerate()
        .map(|(n, c)| {
            let mut c = c.clone();
            c["id"] = json!((1_300_000_000_000_000_000u64 + n as u64).to_string());
            c["application_id"] = json!(app.to_string());
            c["version"] = json!("1");
            c
        })
        .collect();
    *lock(&inner.commands) = cmds;
    axum::Json(answer).into_response()
}

pub(super) fn invalid_form() -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({"message": "Invalid Form Body", "code": 50035})),
    )
        .into_response()
}

pub(super) async fn create_message(
    State(inner): State<Arc<Inner>>,
    Path(channel): Path<u64>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if lock(&inner.forbidden).contains(&channel) {
        lock(&inner.refused_posts).push(channel);
        return (
            StatusCode::FORBIDDEN,
            axum::Json(json!({"message": "Missing Access", "code": 50001})),
        )
            .into_response();
    }
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return invalid_form();
    };
    let has_content = v["content"].as_str().is_some_and(|c| !c.is_empty());
    let has_embeds = v["embeds"].as_array().is_some_and(|e| !e.is_empty());
    if !has_content && !has_embeds {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"message": "Cannot send an empty message", "code": 50006})),
        )
            .into_response();
    }
    let n = {
        let mut m = lock(&inner.messages);
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        m.push(Message {
            channel,
            body: v.clone(),
            authorization: header("authorization"),
            content_type: header("content-type"),
            user_agent: header("user-agent"),
        });
        m.len() as u64
    };
    axum::Json(json!({
        "id": (1_400_000_000_000_000_000u64 + n).to_string(),
        "type": 0,
        "channel_id": channel.to_string(),
        "content": v["content"].as_str().unwrap_or_default(),
        "embeds": v["embeds"].as_array().cloned().unwrap_or_default(),
        "author": payloads::user(APPLICATION_ID, "quotebot", true),
        "attachments": [],
        "mentions": [],
        "mention_roles": [],
        "mention_everyone": false,
        "pinned": false,
        "tts": false,
        "timestamp": "2026-01-01T00:00:00.000000+00:00",
        "edited_timestamp": null,
        "flags": 0,
        "components": [],
    }))
    .into_response()
}

pub(super) async fn callback(
    State(inner): State<Arc<Inner>>,
    Path((id, _token)): Path<(u64, String)>,
    body: Bytes,
) -> Response {
    // Interaction callbacks are authenticated by their token, not the bot's.
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return invalid_form();
    };
    lock(&inner.callbacks).push((id, v));
    StatusCode::NO_CONTENT.into_response()
}

pub(super) async fn unknown() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({"message": "404: Not Found", "code": 0})),
    )
        .into_response()
}
