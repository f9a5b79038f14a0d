//! Headers on every channel-web response: a Content-Security-Policy that
//! lets the pages load scripts and styles from this origin only and talk to
//! this origin and the provider (API, chat WebSocket, HLS hosts), and the
//! usual hardening headers.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use url::Url;

use crate::config::Config;

pub type Headers = Arc<Vec<(HeaderName, HeaderValue)>>;

/// The provider's origin and its WebSocket twin.
fn provider_origins(cfg: &Config) -> Vec<String> {
    let Ok(u) = Url::parse(&cfg.stream.url) else {
        return Vec::new();
    };
    let origin = u.origin().ascii_serialization();
    let ws = origin
        .replacen("https://", "wss://", 1)
        .replacen("http://", "ws://", 1);
    vec![origin, ws]
}

/// The policy's text.
pub fn policy(cfg: &Config) -> String {
    let provider = provider_origins(cfg).join(" ");
    let media = cfg.web.media_origins.join(" ");
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; \
         img-src 'self' data: blob: https:; \
         media-src 'self' blob: {provider} {media}; \
         connect-src 'self' {provider} {media}; \
         worker-src 'self' blob:; font-src 'self'; object-src 'none'; \
         base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
    )
}

pub fn headers(cfg: &Config) -> Headers {
    let mut out = vec![
        (
            HeaderName::from_static("x-content-type-options"),
            HeaderValue::from_static("nosniff"),
        ),
        (
            HeaderName::from_static("referrer-policy"),
            HeaderValue::from_static("strict-origin-when-cross-origin"),
        ),
        (
            HeaderName::from_static("x-frame-options"),
            HeaderValue::from_static("DENY"),
        ),
        (
            HeaderName::from_static("permissions-policy"),
            HeaderValue::from_static("camera=(), microphone=(), geolocation=()"),
        ),
    ];
    if let Ok(v) = HeaderValue::from_str(&policy(cfg)) {
        out.push((HeaderName::from_static("content-security-policy"), v));
    }
    Arc::new(out)
}

/// Adds the headers a response does not set itself.
pub async fn add(State(headers): State<Headers>, mut resp: Response) -> Response {
    let h = resp.headers_mut();
    for (name, value) in headers.iter() {
        if !h.contains_key(name) {
            h.insert(name.clone(), value.clone());
        }
    }
    resp
}
