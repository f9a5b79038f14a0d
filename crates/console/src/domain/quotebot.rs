//! quotebot's Discord gateway as its manager reports it (quotebot runs as
//! a process of its own, answering `GET /api/health/gateway` on its health
//! listener), read for the health page when `KEEL_CONSOLE_QUOTEBOT_URL`
//! names that listener.

use std::time::Duration;

use chrono::{DateTime, Utc};
use keel_platform::outbound::{HttpClient, OutboundError};
use serde::Deserialize;

/// How long the health page waits for quotebot.
const WAIT: Duration = Duration::from_secs(2);

/// What quotebot's manager says of its shards' gateway sessions.
#[derive(Debug, Deserialize)]
pub struct Gateway {
    pub shards: u32,
    pub ready: u32,
    pub restarts: u64,
    pub changed_at: Option<DateTime<Utc>>,
}

/// Why quotebot's report could not be had.
#[derive(Debug, thiserror::Error)]
pub enum Unanswered {
    #[error("{0}")]
    Call(#[from] OutboundError),
    #[error("quotebot answered {0}")]
    Refused(u16),
    #[error("quotebot's answer could not be read: {0}")]
    Unreadable(String),
}

/// The report of the quotebot whose health listener is at `base`.
pub async fn gateway(http: &HttpClient, base: &str) -> Result<Gateway, Unanswered> {
    let url = format!("{}/api/health/gateway", base.trim_end_matches('/'));
    let resp = http.send(http.client().get(url).timeout(WAIT)).await?;
    if !resp.status().is_success() {
        return Err(Unanswered::Refused(resp.status().as_u16()));
    }
    resp.json::<Gateway>()
        .await
        .map_err(|e| Unanswered::Unreadable(e.without_url().to_string()))
}
