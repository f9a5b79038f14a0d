//! A fake Expo push service: `POST /--/api/v2/push/send` and
//! `POST /--/api/v2/push/getReceipts` with Expo's request and response
//! shapes and limits (100 recipients a request counted across `to` arrays,
//! 1000 receipt ids a request, 600 notifications per second answering 429
//! `TOO_MANY_REQUESTS`), gzip request bodies, per-token ticket and receipt
//! errors, scripted request failures, and a record of what it accepted.
//!
//! `GET /_fake/stats` reports the counts as JSON, for the benchmark, which
//! runs this fake as its own process (`fake-expo` binary).

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Notify;

pub const MAX_RECIPIENTS: usize = 100;
pub const MAX_RECEIPT_IDS: usize = 1000;
pub const RATE_PER_SECOND: usize = 600;

/// One notification Expo accepted (one recipient of one message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    pub to: String,
    pub title: Option<String>,
    pub body: Option<String>,
    pub data: Option<Value>,
    /// The ticket it got: `ok` or the error code.
    pub ticket: String,
}

/// What came with one send request Expo answered.
#[derive(Debug, Clone)]
pub struct SendRequest {
    pub recipients: usize,
    pub gzipped: bool,
    pub authorization: Option<String>,
}

#[derive(Default)]
struct Log {
    delivered: Vec<Delivered>,
    requests: Vec<SendRequest>,
    /// ticket id → push token
    tickets: HashMap<String, String>,
    receipt_requests: Vec<usize>,
}

#[derive(Default)]
struct Inner {
    rate_limit: Mutex<Option<usize>>,
    window: Mutex<VecDeque<(Instant, usize)>>,
    ticket_errors: Mutex<HashMap<String, String>>,
    receipt_errors: Mutex<HashMap<String, String>>,
    receipts_ready: Mutex<bool>,
    scripted: Mutex<VecDeque<u16>>,
    hold_after: Mutex<Option<usize>>,
    released: Notify,
    log: Mutex<Log>,
    rate_limited: AtomicUsize,
    refused: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

/// The fake; cheap to clone.
#[derive(Clone)]
pub struct FakeExpo {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
}

/// Counts, as `GET /_fake/stats` reports them.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ExpoStats {
    pub requests: usize,
    pub notifications: usize,
    pub distinct_tokens: usize,
    /// Tokens that got more than one notification.
    pub repeated_tokens: usize,
    pub max_request: usize,
    pub rate_limited: usize,
    pub refused: usize,
    pub max_in_flight: usize,
    pub gzipped: usize,
    pub receipt_requests: usize,
}

impl FakeExpo {
    /// Listens on a free loopback port with Expo's 600/s limit.
    pub async fn start() -> Self {
        Self::start_on(
            "127.0.0.1:0".parse().expect("an address"),
            Some(RATE_PER_SECOND),
        )
        .await
    }

    /// Listens on `addr`; `rate_limit` notifications per second (`None`: no limit).
    pub async fn start_on(addr: SocketAddr, rate_limit: Option<usize>) -> Self {
        let inner = Arc::new(Inner::default());
        *lock(&inner.rate_limit) = rate_limit;
        *lock(&inner.receipts_ready) = true;
        let app = Router::new()
            .route("/--/api/v2/push/send", post(send))
            .route("/--/api/v2/push/getReceipts", post(receipts))
            .route("/_fake/stats", get(stats_route))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .expect("bind the fake Expo");
        let addr = listener.local_addr().expect("fake Expo address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, inner }
    }

    /// What `KEEL_EXPO_URL` should be.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn set_rate_limit(&self, per_second: Option<usize>) {
        *lock(&self.inner.rate_limit) = per_second;
    }

    /// Every ticket for `token` is this error (e.g. `DeviceNotRegistered`,
    /// `MessageTooBig`).
    pub fn ticket_error(&self, token: &str, code: &str) {
        lock(&self.inner.ticket_errors).insert(token.to_owned(), code.to_owned());
    }

    /// The receipt of every ok ticket for `token` is this error.
    pub fn receipt_error(&self, token: &str, code: &str) {
        lock(&self.inner.receipt_errors).insert(token.to_owned(), code.to_owned());
    }

    /// Whether receipts are available yet (absent from answers until then).
    pub fn receipts_ready(&self, ready: bool) {
        *lock(&self.inner.receipts_ready) = ready;
    }

    /// The next send requests are answered with these statuses (429, 503,
    /// 400...), in order, before anything else is looked at.
    pub fn fail_next(&self, statuses: &[u16]) {
        lock(&self.inner.scripted).extend(statuses.iter().copied());
    }

    /// Scripted failures not used yet.
    pub fn fail_pending(&self) -> usize {
        lock(&self.inner.scripted).len()
    }

    /// After `n` accepted send requests, hold further ones unanswered until
    /// [`FakeExpo::release`]; held requests are then refused with 503 and
    /// never count as accepted.
    pub fn hold_after(&self, n: usize) {
        *lock(&self.inner.hold_after) = Some(n);
    }

    /// Refuses the held requests (503) and stops holding.
    pub fn release(&self) {
        *lock(&self.inner.hold_after) = None;
        self.inner.released.notify_waiters();
    }

    /// Every notification accepted so far, in arrival order.
    pub fn delivered(&self) -> Vec<Delivered> {
        lock(&self.inner.log).delivered.clone()
    }

    /// The send requests answered 200 so far.
    pub fn requests(&self) -> Vec<SendRequest> {
        lock(&self.inner.log).requests.clone()
    }

    /// How many ids each receipts request asked for.
    pub fn receipt_requests(&self) -> Vec<usize> {
        lock(&self.inner.log).receipt_requests.clone()
    }

    /// Accepted notifications per push token.
    pub fn per_token(&self) -> HashMap<String, usize> {
        let mut counts = HashMap::new();
        for d in &lock(&self.inner.log).delivered {
            *counts.entry(d.to.clone()).or_insert(0) += 1;
        }
        counts
    }

    pub fn stats(&self) -> ExpoStats {
        stats(&self.inner)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn stats(inner: &Inner) -> ExpoStats {
    let log = lock(&inner.log);
    let mut per_token: HashMap<&str, usize> = HashMap::new();
    for d in &log.delivered {
        *per_token.entry(d.to.as_str()).or_insert(0) += 1;
    }
    ExpoStats {
        requests: log.requests.len(),
        notifications: log.delivered.len(),
        distinct_tokens: per_token.len(),
        repeated_tokens: per_token.values().filter(|n| **n > 1).count(),
        max_request: log.requests.iter().map(|r| r.recipients).max().unwrap_or(0),
        rate_limited: inner.rate_limited.load(Ordering::SeqCst),
        refused: inner.refused.load(Ordering::SeqCst),
        max_in_flight: inner.max_in_flight.load(Ordering::SeqCst),
        gzipped: log.requests.iter().filter(|r| r.gzipped).count(),
        receipt_requests: log.receipt_requests.len(),
    }
}

async fn stats_route(State(inner): State<Arc<Inner>>) -> Response {
    axum::Json(stats(&inner)).into_response()
}

/// Expo's request-level error body.
fn errors(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        axum::Json(json!({"errors": [{"code": code, "message": message}]})),
    )
        .into_response()
}

fn scripted(status: u16) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    let code = match status.as_u16() {
        429 => "TOO_MANY_REQUESTS",
        400 => "VALIDATION_ERROR",
        _ => "INTERNAL_SERVER_ERROR",
    };
    errors(status, code, "scripted failure")
}

/// The request body, gunzipped when it says so.
fn body_of(headers: &HeaderMap, raw: &[u8]) -> Result<(Value, bool), &'static str> {
    let gzipped = headers
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("gzip"));
    let mut bytes = Vec::new();
    if gzipped {
        flate2::read::GzDecoder::new(raw)
            .read_to_end(&mut bytes)
            .map_err(|_| "bad gzip body")?;
    } else {
        bytes = raw.to_vec();
    }
    serde_json::from_slice(&bytes)
        .map(|v| (v, gzipped))
        .map_err(|_| "the body is not JSON")
}

/// One entry per recipient: (token, message), or why the body is invalid.
fn recipients(body: &Value) -> Result<Vec<(String, Value)>, &'static str> {
    let messages = match body {
        Value::Array(items) => items.clone(),
        Value::Object(_) => vec![body.clone()],
        _ => return Err("the body must be a message or an array of messages"),
    };
    let mut out = Vec::new();
    for m in messages {
        match m.get("to") {
            Some(Value::String(t)) => out.push((t.clone(), m.clone())),
            Some(Value::Array(ts)) => {
                for t in ts {
                    let t = t.as_str().ok_or("\"to\" must hold push tokens")?;
                    out.push((t.to_owned(), m.clone()));
                }
            }
            _ => return Err("every message needs \"to\""),
        }
    }
    Ok(out)
}

/// Counts `n` notifications against the last second, if they fit.
fn within_rate(inner: &Inner, n: usize) -> bool {
    let Some(limit) = *lock(&inner.rate_limit) else {
        return true;
    };
    let now = Instant::now();
    let mut window = lock(&inner.window);
    while window
        .front()
        .is_some_and(|(at, _)| now.duration_since(*at) >= Duration::from_secs(1))
    {
        window.pop_front();
    }
    let used: usize = window.iter().map(|(_, k)| k).sum();
    if used + n > limit {
        return false;
    }
    window.push_back((now, n));
    true
}

struct InFlight<'a>(&'a Inner);

impl<'a> InFlight<'a> {
    fn enter(inner: &'a Inner) -> Self {
        let now = inner.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        inner.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Self(inner)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits while requests are held; true when released (refuse the request).
async fn held(inner: &Inner) -> bool {
    let mut was_held = false;
    loop {
        let released = inner.released.notified();
        let hold = *lock(&inner.hold_after);
        match hold {
            Some(n) if lock(&inner.log).requests.len() >= n => {
                was_held = true;
                released.await;
            }
            _ => return was_held,
        }
    }
}

async fn send(State(inner): State<Arc<Inner>>, headers: HeaderMap, raw: Bytes) -> Response {
    let _in_flight = InFlight::enter(&inner);
    if held(&inner).await {
        return scripted(503);
    }
    let next_failure = lock(&inner.scripted).pop_front();
    if let Some(status) = next_failure {
        return scripted(status);
    }
    let (body, gzipped) = match body_of(&headers, &raw) {
        Ok(b) => b,
        Err(why) => return errors(StatusCode::BAD_REQUEST, "VALIDATION_ERROR", why),
    };
    let to = match recipients(&body) {
        Ok(to) => to,
        Err(why) => return errors(StatusCode::BAD_REQUEST, "VALIDATION_ERROR", why),
    };
    if to.len() > MAX_RECIPIENTS {
        inner.refused.fetch_add(1, Ordering::SeqCst);
        return errors(
            StatusCode::BAD_REQUEST,
            "PUSH_TOO_MANY_NOTIFICATIONS",
            "You are trying to send more than 100 push notifications in one request",
        );
    }
    if !within_rate(&inner, to.len()) {
        inner.rate_limited.fetch_add(1, Ordering::SeqCst);
        return errors(
            StatusCode::TOO_MANY_REQUESTS,
            "TOO_MANY_REQUESTS",
            "You have exceeded the rate limit of 600 notifications per second for this project",
        );
    }
    let tickets = accept(&inner, &headers, &to, gzipped);
    axum::Json(json!({ "data": tickets })).into_response()
}

fn accept(inner: &Inner, headers: &HeaderMap, to: &[(String, Value)], gzipped: bool) -> Vec<Value> {
    let ticket_errors = lock(&inner.ticket_errors).clone();
    let mut log = lock(&inner.log);
    log.requests.push(SendRequest {
        recipients: to.len(),
        gzipped,
        authorization: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    });
    let mut tickets = Vec::with_capacity(to.len());
    for (token, message) in to {
        let text = |k: &str| message.get(k).and_then(Value::as_str).map(str::to_owned);
        let ticket = match ticket_errors.get(token) {
            Some(code) => {
                tickets.push(json!({
                    "status": "error",
                    "message": format!("\"{token}\" is not a registered push notification recipient"),
                    "details": {"error": code, "expoPushToken": token},
                }));
                code.clone()
            }
            None => {
                let id = uuid::Uuid::new_v4().to_string();
                log.tickets.insert(id.clone(), token.clone());
                tickets.push(json!({"status": "ok", "id": id}));
                "ok".to_owned()
            }
        };
        log.delivered.push(Delivered {
            to: token.clone(),
            title: text("title"),
            body: text("body"),
            data: message.get("data").cloned(),
            ticket,
        });
    }
    tickets
}

async fn receipts(State(inner): State<Arc<Inner>>, headers: HeaderMap, raw: Bytes) -> Response {
    let (body, _) = match body_of(&headers, &raw) {
        Ok(b) => b,
        Err(why) => return errors(StatusCode::BAD_REQUEST, "VALIDATION_ERROR", why),
    };
    let Some(ids) = body.get("ids").and_then(Value::as_array) else {
        return errors(
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
            "\"ids\" must be an array",
        );
    };
    if ids.len() > MAX_RECEIPT_IDS {
        return errors(
            StatusCode::BAD_REQUEST,
            "PUSH_TOO_MANY_RECEIPTS",
            "You are trying to get more than 1000 push receipts in one request",
        );
    }
    let ready = *lock(&inner.receipts_ready);
    let receipt_errors = lock(&inner.receipt_errors).clone();
    let mut log = lock(&inner.log);
    log.receipt_requests.push(ids.len());
    let mut data = serde_json::Map::new();
    for id in ids.iter().filter_map(Value::as_str) {
        let Some(token) = log.tickets.get(id).filter(|_| ready) else {
            continue;
        };
        let receipt = match receipt_errors.get(token) {
            Some(code) => json!({
                "status": "error",
                "message": format!("\"{token}\" is not a registered push notification recipient"),
                "details": {"error": code},
            }),
            None => json!({"status": "ok"}),
        };
        data.insert(id.to_owned(), receipt);
    }
    axum::Json(json!({ "data": data })).into_response()
}
