//! The shard count: `GET /api/v10/gateway/bot` (with the bot token), which
//! also gives the gateway URL the shards connect to. Network errors, 5xx
//! and 429 (after its `retry_after`) are retried; an invalid token (401)
//! is not.

use std::time::Duration;

use keel_platform::config::OutboundConfig;
use keel_platform::outbound::{HttpClient, read_json, remote_wait, retry_after};
use serde::Deserialize;

use crate::config::Config;

#[derive(Debug, Clone, Deserialize)]
pub struct GatewayBot {
    pub url: String,
    pub shards: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    #[error("Discord refused the bot token (401): CHAT_APPLICATION_BOT_TOKEN is invalid")]
    InvalidToken,
    #[error("could not get the shard count after {attempts} attempts: {last}")]
    Exhausted { attempts: u32, last: String },
}

enum Attempt {
    Done(GatewayBot),
    Retry {
        why: String,
        after: Option<Duration>,
    },
    Fatal(LookupError),
}

async fn once(http: &HttpClient, cfg: &Config) -> Attempt {
    let url = format!(
        "{}/api/v10/gateway/bot",
        cfg.discord_api.as_str().trim_end_matches('/')
    );
    let req = http
        .client()
        .get(url)
        .header("authorization", format!("Bot {}", cfg.token.expose()));
    let resp = match http.send(req).await {
        Ok(r) => r,
        Err(e) => {
            return Attempt::Retry {
                why: format!("network: {e}"),
                after: None,
            };
        }
    };
    let status = resp.status();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        return Attempt::Fatal(LookupError::InvalidToken);
    }
    let header_wait = retry_after(&resp);
    if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        let body: serde_json::Value = read_json(resp).await.unwrap_or_default();
        let wait = body["retry_after"]
            .as_f64()
            .and_then(|s| remote_wait(s, cfg.timing.lookup_max_wait))
            .or(header_wait);
        return Attempt::Retry {
            why: "429 Too Many Requests".to_owned(),
            after: wait,
        };
    }
    if status.is_server_error() {
        return Attempt::Retry {
            why: format!("{status}"),
            after: header_wait,
        };
    }
    if !status.is_success() {
        return Attempt::Fatal(LookupError::Exhausted {
            attempts: 1,
            last: format!("Discord answered {status}"),
        });
    }
    match read_json::<GatewayBot>(resp).await {
        Ok(g) if g.shards > 0 => Attempt::Done(g),
        Ok(_) => Attempt::Retry {
            why: "a shard count of 0".to_owned(),
            after: None,
        },
        Err(e) => Attempt::Retry {
            why: format!("unreadable answer: {e}"),
            after: None,
        },
    }
}

pub async fn shard_count(cfg: &Config) -> Result<GatewayBot, LookupError> {
    let http = HttpClient::new(&OutboundConfig {
        timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(5),
        retries: 0,
        jwks_refetch_cooldown: Duration::ZERO,
    })
    .map_err(|e| LookupError::Exhausted {
        attempts: 0,
        last: e.to_string(),
    })?;
    let t = &cfg.timing;
    let mut backoff = t.lookup_backoff;
    let mut last = String::new();
    for attempt in 1..=t.lookup_attempts.max(1) {
        match once(&http, cfg).await {
            Attempt::Done(g) => return Ok(g),
            Attempt::Fatal(e) => return Err(e),
            Attempt::Retry { why, after } => {
                tracing::warn!(attempt, %why, "looking up the shard count failed; retrying");
                last = why;
                if attempt < t.lookup_attempts {
                    tokio::time::sleep(after.unwrap_or(backoff)).await;
                    backoff = backoff.saturating_mul(2);
                }
            }
        }
    }
    Err(LookupError::Exhausted {
        attempts: t.lookup_attempts,
        last,
    })
}
