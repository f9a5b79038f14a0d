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
mod server;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::routing::{get, post};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

pub const API_KEY: &str = "fake-stream-key";
pub const API_SECRET: &str = "fake-stream-secret-0123456789abcdef";

/// A server-side request the fake answered.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Every query parameter (`api_key` among them).
    pub query: std::collections::BTreeMap<String, String>,
    /// `Stream-Auth-Type`.
    pub auth_type: Option<String>,
    /// Whether `Authorization` is a server token signed with the secret.
    pub server_token: bool,
    /// `X-Stream-Client`, else `User-Agent`.
    pub client: Option<String>,
    pub body: Value,
}

pub use chat::ChatConnect;

#[derive(Debug, Clone, Default)]
pub(crate) struct Call {
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
    /// Users by id (`POST /api/v2/users`).
    users: Mutex<HashMap<String, Value>>,
    /// Every chat connection's query parameters, and every client channel
    /// query, as they came.
    chat_connects: Mutex<Vec<ChatConnect>>,
    chat_queries: Mutex<Vec<ChatConnect>>,
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
pub(crate) use server::error;

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
            .route(
                "/api/v2/video/call/{type}/{id}",
                get(server::call).post(server::call),
            )
            .route(
                "/api/v2/video/call/{type}/{id}/{action}",
                post(server::call_action),
            )
            .route(
                "/api/v2/chat/channels/{type}/{id}/query",
                post(server::chat_query),
            )
            .route("/api/v2/users", post(server::upsert_users))
            .route("/hls/{id}/playlist.m3u8", get(server::playlist))
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

    /// Forgets the requests recorded so far.
    pub fn clear_requests(&self) {
        lock(&self.inner.recorded).clear();
    }

    /// The users upserted so far, by id.
    pub fn users(&self) -> HashMap<String, Value> {
        lock(&self.inner.users).clone()
    }

    /// Every chat connection a client opened (its `/connect` query).
    pub fn chat_connects(&self) -> Vec<ChatConnect> {
        lock(&self.inner.chat_connects).clone()
    }

    /// Every client-side channel query (`/channels/{type}/{id}/query`).
    pub fn chat_queries(&self) -> Vec<ChatConnect> {
        lock(&self.inner.chat_queries).clone()
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

    /// `X-Signature` of `body` signed with `secret`: hex HMAC-SHA256.
    pub fn signature(body: &[u8], secret: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC key");
        mac.update(body);
        hex::encode(mac.finalize().into_bytes())
    }

    async fn try_deliver_raw(
        &self,
        url: &str,
        body: Vec<u8>,
        opts: Delivery,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let signature = Self::signature(&body, opts.secret.unwrap_or(API_SECRET));
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
