//! The client side of the fake's chat, as GetStream's JS client (npm
//! `stream-chat`) uses it: the WebSocket at `/connect` (`api_key`, `json` =
//! `{user_id, user_details, ...}`, and either `stream-auth-type=jwt` with
//! `authorization` = a user token, or `stream-auth-type=anonymous` with an
//! empty `authorization`, as `connectAnonymousUser()` connects; the first
//! event is `health.check` with the `connection_id`), and `POST
//! /channels/{type}/{id}/query` (a user token, or anonymous for a
//! `livestream` channel, whose type lets anyone read), which answers the
//! channel's messages and, with `watch: true`, subscribes the connection to
//! `message.new` events. Both are recorded as they came.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{API_KEY, API_SECRET, Inner, error, lock};

/// A client's chat request as it came: its query parameters (`json`
/// parsed apart), the headers that matter, and its body.
#[derive(Debug, Clone)]
pub struct ChatConnect {
    pub params: BTreeMap<String, String>,
    pub json: Value,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

impl ChatConnect {
    fn of(q: &HashMap<String, String>, headers: &HeaderMap, body: &[u8]) -> Self {
        let params: BTreeMap<String, String> =
            q.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let json = params
            .get("json")
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or(Value::Null);
        let headers = [
            "authorization",
            "stream-auth-type",
            "x-stream-client",
            "content-type",
        ]
        .iter()
        .filter_map(|h| {
            let v = headers.get(*h)?.to_str().ok()?;
            Some(((*h).to_owned(), v.to_owned()))
        })
        .collect();
        Self {
            params,
            json,
            headers,
            body: serde_json::from_slice(body).unwrap_or(Value::Null),
        }
    }
}

/// One open chat connection.
pub(super) struct Connection {
    user_id: String,
    watching: Vec<String>,
    tx: mpsc::UnboundedSender<String>,
}

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new()
        .route("/connect", get(connect))
        .route("/channels/{type}/{id}/query", post(query))
}

/// The user a token names, if it is signed with the secret and unexpired.
fn user_of(token: &str) -> Option<String> {
    let mut v = Validation::new(Algorithm::HS256);
    v.required_spec_claims.clear();
    let claims =
        jsonwebtoken::decode::<Value>(token, &DecodingKey::from_secret(API_SECRET.as_bytes()), &v)
            .ok()?;
    claims.claims["user_id"].as_str().map(str::to_owned)
}

async fn connect(
    State(inner): State<Arc<Inner>>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if *lock(&inner.chat_down) {
        return error(StatusCode::SERVICE_UNAVAILABLE, -1, "chat is down");
    }
    let record = ChatConnect::of(&q, &headers, &[]);
    let wanted = record.json["user_id"].as_str().map(str::to_owned);
    lock(&inner.chat_connects).push(record);
    let auth = q.get("authorization").map(String::as_str).unwrap_or("");
    let (user, refusal) = match q.get("stream-auth-type").map(String::as_str) {
        _ if q.get("api_key").map(String::as_str) != Some(API_KEY) => {
            (None, Some("api_key not valid"))
        }
        Some("jwt") => {
            let user = user_of(auth);
            let bad = (user.is_none() || user != wanted)
                .then_some("the token is not valid for this user");
            (user, bad)
        }
        Some("anonymous")
            if auth.is_empty() && wanted.as_deref().is_some_and(|u| !u.is_empty()) =>
        {
            (wanted, None)
        }
        Some("anonymous") => (
            None,
            Some("an anonymous connection carries a user id and no token"),
        ),
        _ => (None, Some("stream-auth-type must be jwt or anonymous")),
    };
    let refusal = refusal.map(str::to_owned);
    ws.on_upgrade(move |socket| session(inner, socket, user.unwrap_or_default(), refusal))
}

async fn session(
    inner: Arc<Inner>,
    mut socket: WebSocket,
    user_id: String,
    refusal: Option<String>,
) {
    if let Some(message) = refusal {
        let e = json!({"error": {"code": 40, "message": message, "StatusCode": 401}});
        let _ = socket.send(Message::text(e.to_string())).await;
        let _ = socket.send(Message::Close(None)).await;
        return;
    }
    let id = uuid::Uuid::new_v4().to_string();
    let (tx, mut rx) = mpsc::unbounded_channel();
    lock(&inner.connections).insert(
        id.clone(),
        Connection {
            user_id: user_id.clone(),
            watching: Vec::new(),
            tx,
        },
    );
    let hello = json!({
        "type": "health.check",
        "connection_id": id,
        "cid": "*",
        "me": {"id": user_id},
        "created_at": chrono::Utc::now().to_rfc3339(),
    });
    if socket.send(Message::text(hello.to_string())).await.is_ok() {
        loop {
            tokio::select! {
                out = rx.recv() => match out {
                    Some(text) => if socket.send(Message::text(text)).await.is_err() { break },
                    None => break,
                },
                got = socket.recv() => match got {
                    Some(Ok(Message::Close(_))) => {
                        let _ = socket.send(Message::Close(None)).await;
                        break;
                    }
                    Some(Err(_)) | None => break,
                    Some(Ok(_)) => {}
                },
            }
        }
    }
    lock(&inner.connections).remove(&id);
}

async fn query(
    State(inner): State<Arc<Inner>>,
    Path((kind, id)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if *lock(&inner.chat_down) {
        return error(StatusCode::SERVICE_UNAVAILABLE, -1, "chat is down");
    }
    lock(&inner.chat_queries).push(ChatConnect::of(&q, &headers, &body));
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if q.get("api_key").map(String::as_str) != Some(API_KEY) {
        return error(StatusCode::UNAUTHORIZED, 2, "api_key not found");
    }
    let anonymous = headers
        .get("stream-auth-type")
        .is_some_and(|v| v.as_bytes() == b"anonymous");
    let user = if anonymous {
        // A livestream channel lets anyone read it.
        if kind != "livestream" || !token.is_empty() {
            return error(
                StatusCode::FORBIDDEN,
                17,
                "anonymous users cannot read this channel",
            );
        }
        q.get("user_id").cloned().unwrap_or_default()
    } else {
        match user_of(token) {
            Some(u) => u,
            None => return error(StatusCode::UNAUTHORIZED, 5, "token not valid"),
        }
    };
    let cid = format!("{kind}:{id}");
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if req["watch"] == true {
        let conn = q.get("connection_id").cloned().unwrap_or_default();
        let mut conns = lock(&inner.connections);
        match conns.get_mut(&conn) {
            Some(c) if c.user_id == user => c.watching.push(cid.clone()),
            _ => return error(StatusCode::BAD_REQUEST, 4, "connection_id not valid"),
        }
    }
    let limit = req["messages"]["limit"].as_u64().unwrap_or(25);
    let messages: Vec<Value> = {
        let all = lock(&inner.messages);
        let mine: Vec<&Value> = all.iter().filter(|m| m["cid"] == cid.as_str()).collect();
        let skip = mine
            .len()
            .saturating_sub(usize::try_from(limit).unwrap_or(25));
        mine.into_iter()
            .skip(skip)
            .map(|m| m["message"].clone())
            .collect()
    };
    axum::Json(json!({
        "channel": {"cid": cid, "id": id, "type": kind},
        "messages": messages,
        "members": [],
        "read": [],
        "watchers": [],
        "watcher_count": 1,
        "duration": "1ms",
    }))
    .into_response()
}

/// Posts a message to a chat channel: kept, and sent to its watchers.
pub(super) fn post_message(inner: &Inner, cid: &str, user: &str, text: &str) {
    let message = json!({
        "id": uuid::Uuid::new_v4().to_string(),
        "text": text,
        "type": "regular",
        "user": {"id": user, "name": user},
        "created_at": chrono::Utc::now().to_rfc3339(),
    });
    let event = json!({"type": "message.new", "cid": cid, "message": message});
    lock(&inner.messages).push(event.clone());
    for c in lock(&inner.connections).values() {
        if c.watching.iter().any(|w| w == cid) {
            let _ = c.tx.send(event.to_string());
        }
    }
}

/// How many connections watch `cid`.
pub(super) fn watchers(inner: &Inner, cid: &str) -> usize {
    lock(&inner.connections)
        .values()
        .filter(|c| c.watching.iter().any(|w| w == cid))
        .count()
}
