//! Outbound HTTP: one pooled client (rustls), with timeouts, and retries
//! with exponential backoff for idempotent calls.

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use reqwest::{RequestBuilder, Response, StatusCode};

use crate::config::OutboundConfig;

/// Installs the process-wide TLS crypto provider (ring). Idempotent.
pub fn install_crypto_provider() {
    // Err means one is installed already, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A shared outbound client; cheap to clone.
#[derive(Clone, Debug)]
pub struct HttpClient {
    client: reqwest::Client,
    retries: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    #[error("could not build the HTTP client: {0}")]
    Build(reqwest::Error),
    #[error("request failed: {0}")]
    Network(#[from] reqwest::Error),
}

impl HttpClient {
    pub fn new(cfg: &OutboundConfig) -> Result<Self, OutboundError> {
        Self::with_builder(cfg, reqwest::Client::builder())
    }

    /// Builds from a caller-prepared builder (extra roots, HTTP/2 only, ...).
    pub fn with_builder(
        cfg: &OutboundConfig,
        builder: reqwest::ClientBuilder,
    ) -> Result<Self, OutboundError> {
        install_crypto_provider();
        let client = builder
            .timeout(cfg.timeout)
            .connect_timeout(cfg.connect_timeout)
            .user_agent(concat!("keel/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(OutboundError::Build)?;
        Ok(Self {
            client,
            retries: cfg.retries,
        })
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Sends an idempotent request, retrying network errors, 429 and 5xx
    /// with exponential backoff (or the server's `Retry-After`, up to 30 s).
    /// After the last attempt the last answer is returned as it is.
    pub async fn send_idempotent<F>(&self, make: F) -> Result<Response, OutboundError>
    where
        F: Fn() -> RequestBuilder,
    {
        let mut delays = ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(200))
            .with_max_delay(Duration::from_secs(10))
            .with_jitter()
            .with_max_times(self.retries)
            .build();
        loop {
            let (last, server_delay) = match make().send().await {
                Ok(resp) if !is_retryable(resp.status()) => return Ok(resp),
                Ok(resp) => {
                    let wait = retry_after(&resp);
                    (Ok(resp), wait)
                }
                Err(e) if !is_transient(&e) => return Err(e.into()),
                Err(e) => (Err(e), None),
            };
            let Some(delay) = delays.next() else {
                return last.map_err(Into::into);
            };
            let delay = server_delay.unwrap_or(delay);
            tracing::debug!(?delay, "retrying an outbound request");
            tokio::time::sleep(delay).await;
        }
    }
}

fn is_transient(e: &reqwest::Error) -> bool {
    e.is_connect() || e.is_timeout() || e.is_request()
}

/// Statuses worth retrying: 429 and 5xx.
pub fn is_retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// The server's `Retry-After` in seconds, capped at 30 s.
pub fn retry_after(resp: &Response) -> Option<Duration> {
    resp.headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::from_secs_f64(s.min(30.0)))
}
