//! Outbound HTTP: one pooled client (rustls), with timeouts, and retries
//! with exponential backoff for idempotent calls.
//!
//! Every outbound request is sent through [`HttpClient::send`] or
//! [`HttpClient::send_idempotent`], and every failure comes back as an
//! [`OutboundError`] whose text names the host but never the URL: a
//! provider's credential often lives in it (a Discord webhook's token in the
//! path, GetStream's `api_key` in the query), and reqwest's own error text
//! carries the whole URL into logs and job records. This is the one place
//! that is redacted.

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use reqwest::{RequestBuilder, Response, StatusCode};

use crate::config::OutboundConfig;
use crate::crypto::install_crypto_provider;
use crate::observe::{self, Call, Phase, timed, trace};

/// A shared outbound client; cheap to clone.
#[derive(Clone, Debug)]
pub struct HttpClient {
    client: reqwest::Client,
    retries: usize,
    /// What one call may take, retries included.
    budget: Duration,
}

/// An outbound request that failed before an answer arrived, or whose
/// answer could not be read. Its text is the host and reqwest's whole
/// error chain without the URL.
#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    #[error("could not build the HTTP client: {}{}", describe(.0), build_hint(.0))]
    Build(reqwest::Error),
    #[error("request to {host} failed: {}", describe(.source))]
    Request {
        host: String,
        source: reqwest::Error,
    },
}

impl From<reqwest::Error> for OutboundError {
    fn from(e: reqwest::Error) -> Self {
        let host = e
            .url()
            .and_then(|u| u.host_str().map(|h| (h.to_owned(), u.port())))
            .map_or_else(
                || "a remote host".to_owned(),
                |(h, port)| port.map_or_else(|| h.clone(), |p| format!("{h}:{p}")),
            );
        Self::Request {
            host,
            source: e.without_url(),
        }
    }
}

impl OutboundError {
    /// Whether the request may be tried again (a network error or a
    /// timeout, not a request that could not be built).
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Build(_) => false,
            Self::Request { source, .. } => is_transient(source),
        }
    }
}

/// What to do about a client that could not be built, when keel can tell.
fn build_hint(e: &reqwest::Error) -> &'static str {
    if describe(e).contains("No CA certificates") {
        " (no CA certificates were found: keel trusts the system's roots, \
         /etc/ssl/certs/ca-certificates.crt on Debian (package ca-certificates); \
         install them, or point SSL_CERT_FILE at a PEM bundle or SSL_CERT_DIR at a \
         directory of certificates)"
    } else {
        ""
    }
}

/// reqwest's error and its sources, `a: b: c`; no URL when the error was
/// redacted.
fn describe(e: &reqwest::Error) -> String {
    crate::failure::chain(e)
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
            budget: cfg.timeout,
        })
    }

    /// The client, to build requests with; send them with [`Self::send`].
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Sends a request once.
    pub async fn send(&self, req: RequestBuilder) -> Result<Response, OutboundError> {
        Ok(traced(req).await?)
    }

    /// Sends an idempotent request, retrying network errors, 429 and 5xx
    /// with exponential backoff (or the server's `Retry-After`, up to 30 s).
    /// The whole call, retries included, takes at most the client timeout
    /// (`KEEL_HTTP_CLIENT_TIMEOUT_SECS`): each attempt gets what is left,
    /// and no retry starts that could not finish in time, so a provider that
    /// stalls costs a request a bounded wait, not the retries' sum. After
    /// the last attempt the last answer is returned as it is.
    pub async fn send_idempotent<F>(&self, make: F) -> Result<Response, OutboundError>
    where
        F: Fn() -> RequestBuilder,
    {
        let deadline = tokio::time::Instant::now() + self.budget;
        let mut delays = ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(200))
            .with_max_delay(Duration::from_secs(10))
            .with_jitter()
            .with_max_times(self.retries)
            .build();
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let (last, server_delay) = match traced(make().timeout(left)).await {
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
            if tokio::time::Instant::now() + delay >= deadline {
                return last.map_err(Into::into);
            }
            tracing::debug!(?delay, "retrying an outbound request");
            tokio::time::sleep(delay).await;
        }
    }
}

/// Sends `req` as one call (`observe::call`): timed in the request's
/// `Outbound` phase, inside a client span that carries the current trace to
/// the provider in `traceparent` when traces are on.
async fn traced(req: RequestBuilder) -> Result<Response, reqwest::Error> {
    let (client, req) = req.build_split();
    let mut req = req?;
    let url = req.url().clone();
    if !trace::enabled() {
        let answer = timed(Phase::Outbound, client.execute(req)).await;
        observe::answers::http(&url, &answer);
        return answer;
    }
    let call = Call::outbound(req.method(), req.url());
    let answer = observe::call(call, |span| {
        let span = span.clone();
        async move {
            trace::inject(req.headers_mut());
            let resp = client.execute(req).await?;
            let status = resp.status();
            span.record("http.response.status_code", i64::from(status.as_u16()));
            if status.is_server_error() || status.is_client_error() {
                trace::failed(&span);
            }
            Ok(resp)
        }
    })
    .await;
    observe::answers::http(&url, &answer);
    answer
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
    let secs = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()?;
    remote_wait(secs, Duration::from_secs(30))
}

/// A wait a remote service asked for, in seconds (a `Retry-After`, a
/// `retry_after` field), at most `max`; `None` for a negative or
/// non-finite number. Never panics, whatever the number.
pub fn remote_wait(secs: f64, max: Duration) -> Option<Duration> {
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Some(if secs >= max.as_secs_f64() {
        max
    } else {
        Duration::from_secs_f64(secs)
    })
}

/// The answer's body as JSON; a body that cannot be read is an error
/// without the URL.
pub async fn read_json<T: serde::de::DeserializeOwned>(resp: Response) -> Result<T, OutboundError> {
    Ok(resp.json().await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_wait_is_bounded_whatever_the_number() {
        let max = Duration::from_secs(30);
        assert_eq!(remote_wait(1.5, max), Some(Duration::from_millis(1500)));
        assert_eq!(remote_wait(1e300, max), Some(max));
        assert_eq!(remote_wait(f64::MAX, max), Some(max));
        assert_eq!(remote_wait(f64::INFINITY, max), None);
        assert_eq!(remote_wait(f64::NAN, max), None);
        assert_eq!(remote_wait(-1.0, max), None);
        assert_eq!(remote_wait(0.0, max), Some(Duration::ZERO));
    }
}
