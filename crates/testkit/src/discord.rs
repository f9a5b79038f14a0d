//! A fake Discord webhook receiver: `POST /api/webhooks/{id}/{token}` (and
//! `/api/v{n}/webhooks/…`, as discord.js posts) with Discord's limits checked (content at most 2000 characters, at most 10
//! embeds), scripted answers (429 with `retry_after`, 5xx, 404), and a
//! record of what was posted.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::lock;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{OriginalUri, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// A post Discord accepted.
#[derive(Debug, Clone)]
pub struct Posted {
    pub body: Value,
    pub at: Instant,
    pub wait: bool,
    /// The path and query as sent.
    pub path: String,
    pub query: String,
    pub content_type: Option<String>,
    pub user_agent: Option<String>,
}

/// What the next post gets instead of success.
#[derive(Debug, Clone, Copy)]
pub enum Refusal {
    /// 429, retry after this many seconds.
    RateLimited(f64),
    Status(u16),
}

#[derive(Default)]
struct Inner {
    posted: Mutex<Vec<Posted>>,
    refused: Mutex<Vec<(Instant, u16)>>,
    script: Mutex<Vec<Refusal>>,
}

#[derive(Clone)]
pub struct FakeDiscord {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
}

impl FakeDiscord {
    pub async fn start() -> Self {
        let inner = Arc::new(Inner::default());
        let app = Router::new()
            .route("/api/webhooks/{id}/{token}", post(webhook))
            .route("/api/{version}/webhooks/{id}/{token}", post(webhook))
            .with_state(inner.clone());
        let addr = crate::serve_on_loopback(app, "fake Discord").await;
        Self { addr, inner }
    }

    /// A webhook URL as Discord hands them out.
    pub fn webhook_url(&self) -> String {
        format!("http://{}/api/webhooks/123456/token-abc", self.addr)
    }

    pub fn refuse_next(&self, refusals: &[Refusal]) {
        lock(&self.inner.script).extend_from_slice(refusals);
    }

    pub fn posted(&self) -> Vec<Posted> {
        lock(&self.inner.posted).clone()
    }

    /// When each refused post came, and its status.
    pub fn refused(&self) -> Vec<(Instant, u16)> {
        lock(&self.inner.refused).clone()
    }
}

async fn webhook(
    State(inner): State<Arc<Inner>>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    Query(q): Query<std::collections::HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let version = uri.path().split('/').nth(2).unwrap_or_default();
    if version != "webhooks" && !matches!(version, "v9" | "v10") {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"message": "404: Not Found", "code": 0})),
        )
            .into_response();
    }
    let next = {
        let mut s = lock(&inner.script);
        (!s.is_empty()).then(|| s.remove(0))
    };
    if let Some(r) = next {
        let (status, answer) = match r {
            Refusal::RateLimited(secs) => (
                StatusCode::TOO_MANY_REQUESTS,
                json!({"message": "You are being rate limited.", "retry_after": secs, "global": false}),
            ),
            Refusal::Status(s) => (
                StatusCode::from_u16(s).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                json!({"message": "scripted", "code": 0}),
            ),
        };
        lock(&inner.refused).push((Instant::now(), status.as_u16()));
        return (status, axum::Json(answer)).into_response();
    }
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"message": "Cannot send an empty message", "code": 50006})),
        )
            .into_response();
    };
    let content_ok = v["content"]
        .as_str()
        .is_none_or(|c| c.chars().count() <= 2000);
    let embeds_ok = v["embeds"].as_array().is_none_or(|e| e.len() <= 10);
    if !content_ok || !embeds_ok {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"message": "Invalid Form Body", "code": 50035})),
        )
            .into_response();
    }
    let wait = q.get("wait").is_some_and(|w| w == "true");
    lock(&inner.posted).push(Posted {
        body: v.clone(),
        at: Instant::now(),
        wait,
        path: uri.path().to_owned(),
        query: uri.query().unwrap_or_default().to_owned(),
        content_type: header(&headers, "content-type"),
        user_agent: header(&headers, "user-agent"),
    });
    if wait {
        axum::Json(json!({"id": "1", "content": v["content"]})).into_response()
    } else {
        StatusCode::NO_CONTENT.into_response()
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}
