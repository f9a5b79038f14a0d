//! Headers on every channel-web response: the platform's page headers,
//! with a Content-Security-Policy that lets the pages load scripts and
//! styles from this origin only and talk to this origin and the provider
//! (API, chat WebSocket, HLS hosts).

pub use axum::http::header::InvalidHeaderValue;
use keel_platform::http::{PageHeaders, Referrer};
use url::Url;

use crate::config::Config;

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

/// The platform's page headers with the channel's policy.
pub fn headers(cfg: &Config) -> Result<PageHeaders, InvalidHeaderValue> {
    PageHeaders::new(&policy(cfg), Referrer::OriginElsewhere)
}
