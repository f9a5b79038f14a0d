//! A fake GetStream (video and chat): get-or-create, get, go-live and
//! stop-live of a call, get-or-create of a chat channel. Every request
//! must carry `api_key` and the server JWT (HS256 with the secret, claim
//! `server: true`) with `Stream-Auth-Type: jwt`, as the real one wants;
//! requests are recorded. It can also deliver signed webhooks the way the
//! provider does (`X-Signature`, `X-Api-Key`, `X-Webhook-Id`, optionally
//! gzip). The browser's side of chat is in `chat.rs`; HLS playback of a
//! live call is a playlist here whose segments are missing (the page
//! waits for video; tests look at the page's state, not at pictures).

mod chat;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hmac::{Hmac, Mac};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};
use sha2::Sha256;

pub const API_KEY: &str = "fake-stream-key";
pub const API_SECRET: &str = "fake-stream-secret-0123456789abcdef";

/// A request the fake answered.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub body: Value,
}

#[derive(Debug, Clone, Default)]
struct Call {
    backstage: bool,
    live: bool,
}

#[derive(Default)]
pub(crate) struct Inner {
    /// `http://addr` of the fake itself.
    base: String,
    calls: Mutex<HashMap<String, Call>>,
    channels: Mutex<HashMap<String, Value>>,
    recorded: Mutex<Vec<Recorded>>,
    /// Statuses to answer instead, one per request.
    fail: Mutex<Vec<u16>>,
    /// Statuses to answer requests whose path contains the text.
    fail_paths: Mutex<Vec<(String, u16)>>,
    /// How long to hold requests whose path contains the text (a provider
    /// that stalls), one entry per request.
    stalls: Mutex<Vec<(String, std::time::Duration)>>,
    by_role: Mutex<HashMap<String, i64>>,
    anonymous: Mutex<i64>,
    connections: Mutex<HashMap<String, chat::Connection>>,
    /// `message.new` events, oldest first.
    messages: Mutex<Vec<Value>>,
    /// Refuse chat connections and queries (503).
    chat_down: Mutex<bool>,
}

/// The fake; cheap to clone.
#[derive(Clone)]
pub struct FakeStream {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
}

pub(crate) use crate::lock;

impl FakeStream {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake GetStream");
        let addr = listener.local_addr().expect("fake GetStream address");
        let inner = Arc::new(Inner {
            base: format!("http://{addr}"),
            ..Inner::default()
        });
        let app = Router::new()
            .route("/api/v2/video/call/{type}/{id}", get(call).post(call))
            .route("/api/v2/video/call/{type}/{id}/{action}", post(call_action))
            .route("/api/v2/chat/channels/{type}/{id}/query", post(chat_query))
            .route("/hls/{id}/playlist.m3u8", get(playlist))
            .merge(chat::routes())
            .layer(tower_http::cors::CorsLayer::very_permissive())
            .with_state(inner.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, inner }
    }

    /// What `KEEL_STREAM_URL` should be.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The environment that points keel at this fake.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("KEEL_STREAM_URL", self.url()),
            ("KEEL_STREAM_API_KEY", API_KEY.to_owned()),
            ("KEEL_STREAM_API_SECRET", API_SECRET.to_owned()),
        ]
    }

    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.inner.recorded).clone()
    }

    /// Answers the next requests with these statuses instead.
    pub fn fail_next(&self, statuses: &[u16]) {
        lock(&self.inner.fail).extend_from_slice(statuses);
    }

    /// Answers the next `n` requests whose path contains `part` with
    /// `status`.
    pub fn fail_path(&self, part: &str, status: u16, n: usize) {
        lock(&self.inner.fail_paths).extend(std::iter::repeat_n((part.to_owned(), status), n));
    }

    /// Forgets every scripted failure and stall not used yet.
    pub fn heal(&self) {
        lock(&self.inner.fail).clear();
        lock(&self.inner.fail_paths).clear();
        lock(&self.inner.stalls).clear();
    }

    /// Holds the next `n` requests whose path contains `part` for `hold`
    /// before answering them.
    pub fn stall_path(&self, part: &str, hold: std::time::Duration, n: usize) {
        lock(&self.inner.stalls).extend(std::iter::repeat_n((part.to_owned(), hold), n));
    }

    /// Viewers by role, and anonymous ones, of every live session.
    pub fn set_viewers(&self, by_role: &[(&str, i64)], anonymous: i64) {
        *lock(&self.inner.by_role) = by_role.iter().map(|(r, n)| ((*r).to_owned(), *n)).collect();
        *lock(&self.inner.anonymous) = anonymous;
    }

    /// Whether the call is live (made public and not stopped).
    pub fn is_live(&self, cid: &str) -> bool {
        lock(&self.inner.calls).get(cid).is_some_and(|c| c.live)
    }

    /// Posts a chat message as `user` to the chat channel `cid`.
    pub fn post_message(&self, cid: &str, user: &str, text: &str) {
        chat::post_message(&self.inner, cid, user, text);
    }

    /// How many browsers watch the chat channel `cid`.
    pub fn chat_watchers(&self, cid: &str) -> usize {
        chat::watchers(&self.inner, cid)
    }

    /// Makes chat unreachable (503) or reachable again.
    pub fn set_chat_down(&self, down: bool) {
        *lock(&self.inner.chat_down) = down;
    }

    /// An event as the provider sends it.
    pub fn event(kind: &str, cid: &str, extra: Value) -> Value {
        let mut e = json!({
            "type": kind,
            "call_cid": cid,
            "created_at": chrono::Utc::now().to_rfc3339(),
            "call": {"cid": cid, "backstage": kind != "call.live_started"},
        });
        if let (Value::Object(e), Value::Object(x)) = (&mut e, extra) {
            e.extend(x);
        }
        e
    }

    /// Posts `event` to `url` signed as the provider signs it.
    pub async fn deliver(&self, url: &str, event: &Value, opts: Delivery) -> reqwest::Response {
        let body = serde_json::to_vec(event).expect("event JSON");
        self.deliver_raw(url, body, opts).await
    }

    /// Posts `body` (any bytes) signed as the provider signs it.
    pub async fn deliver_raw(&self, url: &str, body: Vec<u8>, opts: Delivery) -> reqwest::Response {
        self.try_deliver_raw(url, body, opts)
            .await
            .expect("deliver the webhook")
    }

    /// [`Self::deliver`], with a failure to connect as an error (a test
    /// that cuts or kills keel under load).
    pub async fn try_deliver(
        &self,
        url: &str,
        event: &Value,
        opts: Delivery,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let body = serde_json::to_vec(event).expect("event JSON");
        self.try_deliver_raw(url, body, opts).await
    }

    async fn try_deliver_raw(
        &self,
        url: &str,
        body: Vec<u8>,
        opts: Delivery,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let secret = opts.secret.unwrap_or(API_SECRET);
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC key");
        mac.update(&body);
        let signature = hex::encode(mac.finalize().into_bytes());
        let raw = if opts.gzip {
            use std::io::Write;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(&body).expect("gzip");
            gz.finish().expect("gzip")
        } else {
            body
        };
        let mut req = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .header("x-api-key", opts.api_key.unwrap_or(API_KEY))
            .body(raw);
        if !opts.unsigned {
            req = req.header("x-signature", signature);
        }
        if let Some(id) = opts.webhook_id {
            req = req
                .header("x-webhook-id", id)
                .header("x-webhook-attempt", "1");
        }
        req.send().await
    }
}

/// How a webhook is delivered.
#[derive(Debug, Clone, Default)]
pub struct Delivery {
    pub webhook_id: Option<String>,
    pub gzip: bool,
    /// Sign with another secret (a forgery).
    pub secret: Option<&'static str>,
    pub api_key: Option<&'static str>,
    /// Leave `X-Signature` out.
    pub unsigned: bool,
}

pub(crate) fn error(status: StatusCode, code: i64, message: &str) -> Response {
    (
        status,
        axum::Json(json!({"code": code, "message": message, "StatusCode": status.as_u16()})),
    )
        .into_response()
}

/// The auth every request needs; `Err` is the answer.
fn check(
    inner: &Inner,
    method: &Method,
    path: &str,
    query: &HashMap<String, String>,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Value, Box<Response>> {
    let scripted = {
        let mut by_path = lock(&inner.fail_paths);
        match by_path.iter().position(|(p, _)| path.contains(p.as_str())) {
            Some(i) => Some(by_path.remove(i).1),
            None => {
                let mut f = lock(&inner.fail);
                (!f.is_empty()).then(|| f.remove(0))
            }
        }
    };
    if let Some(status) = scripted {
        let s = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return Err(Box::new(error(s, 0, "scripted failure")));
    }
    if query.get("api_key").map(String::as_str) != Some(API_KEY) {
        return Err(Box::new(error(
            StatusCode::UNAUTHORIZED,
            2,
            "api_key not found",
        )));
    }
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let auth_type = headers
        .get("stream-auth-type")
        .and_then(|v| v.to_str().ok());
    let mut v = Validation::new(Algorithm::HS256);
    v.required_spec_claims.clear();
    v.validate_exp = false;
    let claims =
        jsonwebtoken::decode::<Value>(token, &DecodingKey::from_secret(API_SECRET.as_bytes()), &v);
    let server = claims.is_ok_and(|c| c.claims["server"] == true);
    if auth_type != Some("jwt") || !server {
        return Err(Box::new(error(
            StatusCode::UNAUTHORIZED,
            5,
            "a server token is required",
        )));
    }
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body).unwrap_or(Value::Null)
    };
    lock(&inner.recorded).push(Recorded {
        method: method.to_string(),
        path: path.to_owned(),
        body: body.clone(),
    });
    Ok(body)
}

/// Waits as a stall scripted for `path` says.
async fn stall(inner: &Inner, path: &str) {
    let hold = {
        let mut stalls = lock(&inner.stalls);
        stalls
            .iter()
            .position(|(p, _)| path.contains(p.as_str()))
            .map(|i| stalls.remove(i).1)
    };
    if let Some(hold) = hold {
        tokio::time::sleep(hold).await;
    }
}

fn call_json(inner: &Inner, kind: &str, id: &str, c: &Call) -> Value {
    let session = if c.live {
        let by_role = lock(&inner.by_role).clone();
        json!({"participants_count_by_role": by_role, "anonymous_participant_count": *lock(&inner.anonymous)})
    } else {
        Value::Null
    };
    json!({
        "cid": format!("{kind}:{id}"),
        "type": kind,
        "id": id,
        "backstage": c.backstage,
        "ingress": {"rtmp": {"address": format!("rtmps://ingress.fake-stream.test:443/{id}")}},
        "egress": {"hls": {"playlist_url": if c.live { format!("{}/hls/{id}/playlist.m3u8", inner.base) } else { String::new() }}},
        "session": session,
    })
}

async fn call(
    State(inner): State<Arc<Inner>>,
    Path((kind, id)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = format!("/api/v2/video/call/{kind}/{id}");
    stall(&inner, &path).await;
    if let Err(r) = check(&inner, &method, &path, &query, &headers, &body) {
        return *r;
    }
    let cid = format!("{kind}:{id}");
    let mut calls = lock(&inner.calls);
    let c = if method == Method::POST {
        calls
            .entry(cid)
            .or_insert(Call {
                backstage: true,
                live: false,
            })
            .clone()
    } else {
        match calls.get(&cid) {
            Some(c) => c.clone(),
            None => return error(StatusCode::NOT_FOUND, 16, "Can't find call"),
        }
    };
    drop(calls);
    axum::Json(json!({"call": call_json(&inner, &kind, &id, &c)})).into_response()
}

async fn call_action(
    State(inner): State<Arc<Inner>>,
    Path((kind, id, action)): Path<(String, String, String)>,
    Query(query): Query<HashMap<String, String>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = format!("/api/v2/video/call/{kind}/{id}/{action}");
    stall(&inner, &path).await;
    if let Err(r) = check(&inner, &method, &path, &query, &headers, &body) {
        return *r;
    }
    let cid = format!("{kind}:{id}");
    let mut calls = lock(&inner.calls);
    let Some(c) = calls.get_mut(&cid) else {
        return error(StatusCode::NOT_FOUND, 16, "Can't find call");
    };
    match action.as_str() {
        "go_live" => {
            c.backstage = false;
            c.live = true;
        }
        "stop_live" => {
            c.backstage = true;
            c.live = false;
        }
        _ => return error(StatusCode::NOT_FOUND, 4, "unknown action"),
    }
    let c = c.clone();
    drop(calls);
    axum::Json(json!({"call": call_json(&inner, &kind, &id, &c), "duration": "1ms"}))
        .into_response()
}

async fn chat_query(
    State(inner): State<Arc<Inner>>,
    Path((kind, id)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = format!("/api/v2/chat/channels/{kind}/{id}/query");
    stall(&inner, &path).await;
    if let Err(r) = check(&inner, &method, &path, &query, &headers, &body) {
        return *r;
    }
    let cid = format!("{kind}:{id}");
    let channel = lock(&inner.channels)
        .entry(cid.clone())
        .or_insert_with(|| json!({"cid": cid, "type": kind, "id": id}))
        .clone();
    axum::Json(json!({"channel": channel, "messages": [], "members": []})).into_response()
}

/// A live playlist whose one segment is missing: players keep waiting.
async fn playlist() -> Response {
    (
        [("content-type", "application/vnd.apple.mpegurl")],
        "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:2.0,\nsegment0.ts\n",
    )
        .into_response()
}
