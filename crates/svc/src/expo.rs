//! The Expo push service: send (at most 100 messages a request), receipts
//! (at most 1000 ids a request). Requests in flight are bounded; the
//! notification rate never exceeds the configured limit in any one-second
//! window, across every process when Redis is configured; bodies over 1 KiB
//! are gzipped, as the official SDK does.

use std::io::Write;
use std::time::Duration;

use flate2::Compression;
use flate2::write::GzEncoder;
use keel_platform::cache::{Admitted, ArrivalWindow, Cache};
use keel_platform::outbound::{HttpClient, is_retryable, retry_after};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{Semaphore, SemaphorePermit};

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
    /// At most the configured notifications in any one-second window of
    /// arrivals (shared by every process through Redis when configured:
    /// Expo's limit is per project, not per process).
    window: Option<ArrivalWindow>,
}

/// Added to the one-second window for timer and clock granularity.
const GUARD: Duration = Duration::from_millis(20);

/// A turn to send: one of the requests in flight and, for a send, its
/// notifications' room in the rate window, held until the answer is back
/// (and counted in the window a second longer). A batch takes its turn
/// before its last look at whether the send was cancelled: waiting for a
/// turn can take seconds under the rate limit, and a cancel made
/// meanwhile must stop it.
pub struct Turn<'a> {
    _slot: SemaphorePermit<'a>,
    _admitted: Option<Admitted<'a>>,
}

impl Expo {
    pub fn new(http: HttpClient, cache: &Cache, cfg: &ExpoConfig) -> Self {
        Self {
            http,
            url: cfg.url.clone(),
            token: cfg.access_token.as_ref().map(|t| t.expose().to_owned()),
            in_flight: Semaphore::new(cfg.concurrency),
            window: (cfg.rate_per_second > 0).then(|| {
                ArrivalWindow::shared(
                    cache,
                    "svc:expo",
                    cfg.rate_per_second,
                    Duration::from_secs(1) + GUARD,
                )
            }),
        }
    }

    /// Waits for a turn to send `notifications` notifications.
    pub async fn turn(&self, notifications: usize) -> Result<Turn<'_>, Failure> {
        let slot = self.in_flight.acquire().await.map_err(|e| Failure::Retry {
            reason: e.to_string(),
            after: None,
        })?;
        let admitted = match &self.window {
            Some(window) => {
                Some(
                    window
                        .admit(notifications)
                        .await
                        .map_err(|e| Failure::Retry {
                            reason: format!("the shared rate window is unavailable: {e}"),
                            after: None,
                        })?,
                )
            }
            None => None,
        };
        Ok(Turn {
            _slot: slot,
            _admitted: admitted,
        })
    }

    /// Sends up to 100 messages in a turn taken for as many; tickets in
    /// their order.
    pub async fn send(&self, turn: Turn<'_>, messages: &[Message]) -> Result<Vec<Ticket>, Failure> {
        let json = serde_json::to_vec(messages).unwrap_or_default();
        let body = self.post(turn, "/--/api/v2/push/send", &json).await?;
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
        let turn = self.turn(0).await?;
        let answer = self
            .post(turn, "/--/api/v2/push/getReceipts", &body)
            .await?;
        serde_json::from_value(answer.get("data").cloned().unwrap_or(Value::Null)).map_err(|e| {
            Failure::Rejected {
                reason: e.to_string(),
            }
        })
    }

    /// One request, in its turn: the turn is given back (and its
    /// notifications counted in the window for a second more) once the
    /// answer is in, however it ends.
    async fn post(&self, turn: Turn<'_>, path: &str, json: &[u8]) -> Result<Value, Failure> {
        let _turn = turn;
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
        let resp = self.http.send(req).await.map_err(|e| Failure::Retry {
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
