//! Who is calling: the owner, by the session cookie the API sets at
//! sign-in; and whether a cookie-authenticated change comes from the
//! channel's own pages (cross-site request protection).
//!
//! A request is same-origin when its `Origin` is the public URL's origin
//! or one of `KEEL_CHANNEL_ALLOWED_ORIGINS`; without `Origin`, when
//! `Sec-Fetch-Site` says `same-origin`, `same-site` or `none`; with
//! neither header (not a browser: curl, a server) it is let through, since
//! the cookie is `SameSite=Lax` and a browser sends one of them on every
//! cross-site POST.

use std::net::IpAddr;

use axum::extract::FromRequestParts;
use axum::http::header::ORIGIN;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue};
use keel_platform::observe::{Phase, timed};

use crate::config::Config;
use crate::domain::owner::{self, Owner};
use crate::error::{self, Error};
use crate::state::AppState;

pub const COOKIE_NAME: &str = "channel_session";

/// The session cookie's token, if the request carries one.
pub fn session_token(headers: &HeaderMap) -> Option<&str> {
    keel_platform::http::cookies::cookie(headers, COOKIE_NAME).filter(|v| !v.is_empty())
}

/// Who is calling: the owner if signed in, and the client's address.
pub struct Visitor {
    pub owner: Option<Owner>,
    pub peer: IpAddr,
}

impl FromRequestParts<AppState> for Visitor {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let peer = keel_platform::http::request_client_ip(parts, &state.trusted);
        let owner = match session_token(&parts.headers) {
            Some(token) => {
                timed(Phase::Auth, owner::find_session(&state.platform.db, token)).await?
            }
            None => None,
        };
        Ok(Self { owner, peer })
    }
}

/// The signed-in owner; UNAUTHORIZED otherwise, and FORBIDDEN for a
/// change that comes from another site.
pub struct OwnerOnly(pub Owner);

impl FromRequestParts<AppState> for OwnerOnly {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let visitor = Visitor::from_request_parts(parts, state).await?;
        let owner = visitor.owner.ok_or_else(error::not_signed_in)?;
        let changes = !matches!(
            parts.method,
            axum::http::Method::GET | axum::http::Method::HEAD
        );
        if changes && !same_origin(&state.cfg, &parts.headers) {
            return Err(error::cross_site());
        }
        Ok(Self(owner))
    }
}

/// Whether a request comes from the channel's own pages (see the module).
pub fn same_origin(cfg: &Config, headers: &HeaderMap) -> bool {
    if let Some(origin) = headers.get(ORIGIN).and_then(|v| v.to_str().ok()) {
        let origin = origin.trim_end_matches('/');
        return origin == cfg.public_origin()
            || cfg
                .allowed_origins
                .iter()
                .any(|o| o.trim_end_matches('/') == origin);
    }
    match headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        Some(site) => matches!(site, "same-origin" | "same-site" | "none"),
        None => true,
    }
}

/// The session cookie: HttpOnly, SameSite=Lax, Secure over https, with
/// `Domain=` when configured (an API on a subdomain of the web host).
pub fn session_cookie(cfg: &Config, token: &str, max_age_secs: i64) -> Option<HeaderValue> {
    let mut c =
        format!("{COOKIE_NAME}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}");
    if cfg.secure_cookies() {
        c.push_str("; Secure");
    }
    if let Some(d) = &cfg.cookie_domain {
        c.push_str("; Domain=");
        c.push_str(d);
    }
    HeaderValue::from_str(&c).ok()
}

/// The cookie that removes the session cookie.
pub fn cleared_cookie(cfg: &Config) -> Option<HeaderValue> {
    session_cookie(cfg, "", 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::header::COOKIE;

    #[test]
    fn the_session_token_is_read_from_the_cookie_header() {
        let mut h = HeaderMap::new();
        h.insert(
            COOKIE,
            HeaderValue::from_static("a=1; channel_session=tok; b=2"),
        );
        assert_eq!(session_token(&h), Some("tok"));
        h.insert(COOKIE, HeaderValue::from_static("channel_session="));
        assert_eq!(session_token(&h), None);
    }
}
