//! Session cookies, one way for every signed-in page (svc's admins, the
//! operator console): `HttpOnly; SameSite=Strict; Path=/`, and over HTTPS
//! the `__Host-` name with `Secure`, which a browser keeps only when it is
//! `Secure`, `Path=/` and without `Domain`, so no other host (a sibling
//! subdomain, a plain-HTTP page) can set one for it.

use axum::http::HeaderMap;
use axum::http::header::COOKIE;
use axum::http::request::Parts;

use crate::config::TrustedProxies;

/// A session cookie's two names: over plain HTTP (a developer's machine)
/// and over HTTPS (`__Host-...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionCookie {
    pub plain: &'static str,
    pub https: &'static str,
}

impl SessionCookie {
    /// Its name for a request over HTTPS or not.
    pub fn name(&self, https: bool) -> &'static str {
        if https { self.https } else { self.plain }
    }

    /// Its name for the request of `parts`.
    pub fn name_of(&self, parts: &Parts, trusted: &TrustedProxies) -> &'static str {
        let peer = parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|c| c.0.ip());
        self.name(is_https(peer, &parts.headers, trusted))
    }

    /// Its value in the request of `parts`, if sent.
    pub fn value<'a>(&self, parts: &'a Parts, trusted: &TrustedProxies) -> Option<&'a str> {
        cookie(&parts.headers, self.name_of(parts, trusted))
    }

    /// `Set-Cookie` for `token` (empty with `max_age` 0: ends it).
    pub fn set(&self, https: bool, token: &str, max_age: i64) -> String {
        format!(
            "{}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{}",
            self.name(https),
            if https { "; Secure" } else { "" }
        )
    }
}

/// Whether the request came over HTTPS: as a trusted proxy says with
/// `X-Forwarded-Proto` (the shipped haproxy and Caddy set it from the
/// connection, over whatever the client sent).
pub fn is_https(
    peer: Option<std::net::IpAddr>,
    headers: &HeaderMap,
    trusted: &TrustedProxies,
) -> bool {
    peer.is_some_and(|ip| trusted.contains(&ip))
        && headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"))
}

/// The value of the cookie `name` in `headers`.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}
