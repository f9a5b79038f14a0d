//! The Expo push service: send (at most 100 messages a request), receipts
//! (at most 1000 ids a request). Requests in flight are bounded; the
//! notification rate never exceeds the configured limit in any one-second
//! window; bodies over 1 KiB are gzipped, as the official SDK does.

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

use flate2::Compression;
use flate2::write::GzEncoder;
use keel_platform::outbound::{HttpClient, is_retryable, retry_after};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::config::ExpoConfig;

pub const MAX_MESSAGES: usize = 100;
pub const MAX_RECEIPT_IDS: usize = 1000;

#[derive(Debug, Clone, Serialize)]
pub struct Message {
    pub to: String,
    pub title: String,
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    pub sound: &'static str,
    pub priority: &'static str,
}

/// One ticket, in request order.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Ticket {
    pub status: String,
    pub id: Option<String>,
    pub message: Option<String>,
    pub details: Option<Details>,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Details {
    pub error: Option<String>,
}

/// A receipt.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Receipt {
    pub status: String,
    pub message: Option<String>,
    pub details: Option<Details>,
}

/// How a request ended.
#[derive(Debug)]
pub enum Failure {
    /// Network error, 429 or 5xx: try again later.
    Retry {
        reason: String,
        after: Option<Duration>,
    },
    /// Any other refusal: never retried.
    Rejected { reason: String },
}

pub struct Expo {
    http: HttpClient,
    url: String,
    token: Option<String>,
    in_flight: Semaphore,
    window: Option<Window>,
}

impl Expo {
    pub fn new(http: HttpClient, cfg: &ExpoConfig) -> Self {
        Self {
            http,
            url: cfg.url.clone(),
            token: cfg.access_token.as_ref().map(|t| t.expose().to_owned()),
            in_flight: Semaphore::new(cfg.concurrency),
            window: (cfg.rate_per_second > 0).then(|| Window::new(cfg.rate_per_second)),
        }
    }

    /// Sends up to 100 messages; tickets in their order.
    pub async fn send(&self, messages: &[Message]) -> Result<Vec<Ticket>, Failure> {
        let json = serde_json::to_vec(messages).unwrap_or_default();
        let body = self
            .post("/--/api/v2/push/send", &json, messages.len())
            .await?;
        #[derive(Deserialize)]
        struct Answer {
            data: Option<Vec<Ticket>>,
            errors: Option<Value>,
        }
        let answer: Answer = serde_json::from_value(body).map_err(|e| Failure::Rejected {
            reason: e.to_string(),
        })?;
        match answer.data {
            Some(tickets) if tickets.len() == messages.len() => Ok(tickets),
            _ => Err(Failure::Rejected {
                reason: answer
                    .errors
                    .map_or_else(|| "Expo answered no tickets".to_owned(), |e| error_code(&e)),
            }),
        }
    }

    /// Receipts of up to 1000 tickets; ids without one yet are absent.
    pub async fn receipts(
        &self,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, Receipt>, Failure> {
        let body = serde_json::to_vec(&serde_json::json!({ "ids": ids })).unwrap_or_default();
        let answer = self.post("/--/api/v2/push/getReceipts", &body, 0).await?;
        serde_json::from_value(answer.get("data").cloned().unwrap_or(Value::Null)).map_err(|e| {
            Failure::Rejected {
                reason: e.to_string(),
            }
        })
    }

    /// One request carrying `notifications` notifications.
    async fn post(&self, path: &str, json: &[u8], notifications: usize) -> Result<Value, Failure> {
        let _slot = self.in_flight.acquire().await.map_err(|e| Failure::Retry {
            reason: e.to_string(),
            after: None,
        })?;
        // Counted in the window until a second after the answer came back
        // (the latest Expo can have received it), however it ends.
        let _admitted = match &self.window {
            Some(window) => Some(window.admit(notifications).await),
            None => None,
        };
        let mut req = self
            .http
            .client()
            .post(format!("{}{path}", self.url))
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .header("accept-encoding", "gzip, deflate");
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        req = if json.len() > 1024 {
            req.header("content-encoding", "gzip").body(gzip(json))
        } else {
            req.body(json.to_vec())
        };
        let resp = req.send().await.map_err(|e| Failure::Retry {
            reason: format!("network: {e}"),
            after: None,
        })?;
        let status = resp.status();
        let after = retry_after(&resp);
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(body);
        }
        let reason = body
            .get("errors")
            .map_or_else(|| status.to_string(), error_code);
        if is_retryable(status) {
            Err(Failure::Retry { reason, after })
        } else {
            Err(Failure::Rejected { reason })
        }
    }
}

fn error_code(errors: &Value) -> String {
    errors
        .as_array()
        .and_then(|e| e.first())
        .and_then(|e| e.get("code"))
        .and_then(Value::as_str)
        .unwrap_or("UNKNOWN_ERROR")
        .to_owned()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    let _ = enc.write_all(data);
    enc.finish().unwrap_or_default()
}

/// At most `limit` notifications in any one-second window, measured where
/// Expo measures it: on arrival. A request counts from the moment it is
/// admitted until a second after its answer came back: Expo received it
/// somewhere in between, so a request admitted later cannot share a
/// one-second window of arrivals with it unless both fit. A token bucket
/// cannot promise this: a full bucket plus a second of refill lets a window
/// hold up to burst + rate.
struct Window {
    limit: usize,
    span: Duration,
    state: Mutex<Log>,
}

#[derive(Default)]
struct Log {
    next_id: u64,
    entries: Vec<Entry>,
}

struct Entry {
    id: u64,
    n: usize,
    /// When the answer came back; `None` while in flight.
    done: Option<Instant>,
}

/// Added to the one-second window for timer and clock granularity.
const GUARD: Duration = Duration::from_millis(20);

/// Polling interval while the window is full of requests still in flight.
const IN_FLIGHT_WAIT: Duration = Duration::from_millis(10);

/// A request's place in the window; settled (its answer time recorded) when
/// dropped.
struct Admitted<'a> {
    window: &'a Window,
    id: u64,
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        self.window.settle(self.id, Instant::now());
    }
}

impl Window {
    fn new(per_second: u32) -> Self {
        Self {
            limit: usize::try_from(per_second).unwrap_or(usize::MAX),
            span: Duration::from_secs(1) + GUARD,
            state: Mutex::new(Log::default()),
        }
    }

    async fn admit(&self, n: usize) -> Admitted<'_> {
        loop {
            match self.try_admit(n.min(self.limit), Instant::now()) {
                Ok(id) => return Admitted { window: self, id },
                Err(wait) => tokio::time::sleep(wait).await,
            }
        }
    }

    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records `n` now if they fit (their id); else how long to wait.
    fn try_admit(&self, n: usize, now: Instant) -> Result<u64, Duration> {
        let mut log = self.log();
        let span = self.span;
        log.entries
            .retain(|e| e.done.is_none_or(|done| now.duration_since(done) < span));
        let mut used: usize = log.entries.iter().map(|e| e.n).sum();
        if used + n <= self.limit {
            log.next_id += 1;
            let id = log.next_id;
            log.entries.push(Entry { id, n, done: None });
            return Ok(id);
        }
        let mut settled: Vec<(Instant, usize)> = log
            .entries
            .iter()
            .filter_map(|e| e.done.map(|d| (d, e.n)))
            .collect();
        settled.sort_by_key(|(d, _)| *d);
        for (done, k) in settled {
            used -= k;
            if used + n <= self.limit {
                return Err((done + span).saturating_duration_since(now));
            }
        }
        Err(IN_FLIGHT_WAIT)
    }

    fn settle(&self, id: u64, now: Instant) {
        if let Some(e) = self.log().entries.iter_mut().find(|e| e.id == id) {
            e.done = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_never_holds_more_than_the_limit() {
        let w = Window::new(600);
        let t0 = Instant::now();
        let ids: Vec<u64> = (0..6).map(|_| w.try_admit(100, t0).unwrap()).collect();
        // Full, and nothing has come back yet: wait and look again.
        assert_eq!(w.try_admit(100, t0), Err(IN_FLIGHT_WAIT));
        // One answer came back 300 ms in: its room frees a span after that.
        let back = t0 + Duration::from_millis(300);
        w.settle(ids[0], back);
        assert_eq!(w.try_admit(100, back), Err(w.span));
        let free = back + w.span;
        assert!(w.try_admit(100, free).is_ok());
        assert!(w.try_admit(1, free).is_err());
    }

    #[test]
    fn small_batches_fill_the_gap_exactly() {
        let w = Window::new(600);
        let t0 = Instant::now();
        let a = w.try_admit(550, t0).unwrap();
        let b = w.try_admit(50, t0 + Duration::from_millis(10)).unwrap();
        assert!(w.try_admit(1, t0 + Duration::from_millis(20)).is_err());
        w.settle(a, t0 + Duration::from_millis(30));
        w.settle(b, t0 + Duration::from_millis(40));
        let later = t0 + Duration::from_millis(30) + w.span;
        assert!(w.try_admit(550, later).is_ok());
        assert!(w.try_admit(100, later).is_err());
    }
}
