//! The fake's side of Expo's wire protocol: the send and receipts routes,
//! request bodies (gzip, messages with one or many recipients), the rate
//! limit and the scripted failures.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Delivered, Inner, MAX_RECEIPT_IDS, MAX_RECIPIENTS, SendRequest, lock};

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

/// The headers Expo's protocol is about, lower-cased, as sent, and the
/// trace context keel passes on (W3C `traceparent`).
fn protocol_headers(headers: &HeaderMap) -> BTreeMap<String, String> {
    [
        "accept",
        "accept-encoding",
        "content-type",
        "content-encoding",
        "authorization",
        "traceparent",
    ]
    .into_iter()
    .filter_map(|name| {
        let v = headers.get(name)?.to_str().ok()?;
        Some((name.to_owned(), v.to_owned()))
    })
    .collect()
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
/// Passing the gate takes one of its places under its lock, so requests
/// arriving together cannot all pass on the same free place.
async fn held(inner: &Inner) -> bool {
    let mut was_held = false;
    loop {
        let released = inner.released.notified();
        {
            let mut places = lock(&inner.hold_after);
            match places.as_mut() {
                Some(0) => was_held = true,
                Some(left) => {
                    *left -= 1;
                    return was_held;
                }
                None => return was_held,
            }
        }
        released.await;
    }
}

pub(super) async fn send(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
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
        headers: protocol_headers(headers),
        first: to.first().map(|(_, m)| m.clone()).unwrap_or_default(),
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

pub(super) async fn receipts(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
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
    log.receipt_headers.push(protocol_headers(&headers));
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
