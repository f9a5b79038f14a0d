//! A fake Expo push service: `POST /--/api/v2/push/send` and
//! `POST /--/api/v2/push/getReceipts` with Expo's request and response
//! shapes and limits (100 recipients a request counted across `to` arrays,
//! 1000 receipt ids a request, 600 notifications per second answering 429
//! `TOO_MANY_REQUESTS`), gzip request bodies, per-token ticket and receipt
//! errors, scripted request failures, and a record of what it accepted.
//!
//! `GET /_fake/stats` reports the counts as JSON and `GET
//! /_fake/notifications` just the accepted count (cheap to poll), for the
//! benchmark, which
//! runs this fake as its own process (`fake-expo` binary).

mod wire;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::lock;
use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use serde_json::Value;
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
    /// The protocol's headers as sent (accept, accept-encoding,
    /// content-type, content-encoding, authorization).
    pub headers: BTreeMap<String, String>,
    /// The request's first message, as sent.
    pub first: Value,
}

#[derive(Default)]
struct Log {
    delivered: Vec<Delivered>,
    requests: Vec<SendRequest>,
    /// ticket id → push token
    tickets: HashMap<String, String>,
    receipt_requests: Vec<usize>,
    receipt_headers: Vec<BTreeMap<String, String>>,
}

#[derive(Default)]
struct Inner {
    rate_limit: Mutex<Option<usize>>,
    window: Mutex<VecDeque<(Instant, usize)>>,
    ticket_errors: Mutex<HashMap<String, String>>,
    receipt_errors: Mutex<HashMap<String, String>>,
    receipts_ready: Mutex<bool>,
    scripted: Mutex<VecDeque<u16>>,
    /// Send requests still let through before holding; None: no hold.
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
            .route("/--/api/v2/push/send", post(wire::send))
            .route("/--/api/v2/push/getReceipts", post(wire::receipts))
            .route("/_fake/stats", get(stats_route))
            .route("/_fake/notifications", get(notifications_route))
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

    /// Let the next `n` send requests through, then hold further ones
    /// unanswered until [`FakeExpo::release`]; held requests are then
    /// refused with 503 and never count as accepted.
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

    /// The protocol's headers of each receipts request.
    pub fn receipt_headers(&self) -> Vec<BTreeMap<String, String>> {
        lock(&self.inner.log).receipt_headers.clone()
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

/// Just the count of accepted notifications, cheap enough to poll.
async fn notifications_route(State(inner): State<Arc<Inner>>) -> String {
    lock(&inner.log).delivered.len().to_string()
}

async fn stats_route(State(inner): State<Arc<Inner>>) -> Response {
    axum::Json(stats(&inner)).into_response()
}
