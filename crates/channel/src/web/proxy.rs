//! `/api/*` forwarded to channel-api, so the session cookie stays
//! first-party: method, path, query, headers (cookies included) and the
//! body (streamed, within a limit) go through; the answer (`Set-Cookie`
//! included) comes back streamed. Hop-by-hop headers are dropped both ways;
//! `X-Forwarded-For`, `-Proto` and `-Host` are set. A failure answers in
//! channel-api's own shape (tRPC's error envelope), never an HTML page.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{CONNECTION, CONTENT_LENGTH, HOST};
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

use super::WebState;
use crate::error::{self, Error, ProxyFailure};

/// Where and how requests are forwarded.
pub struct Proxy {
    client: reqwest::Client,
    /// The API's base URL, without a trailing slash.
    base: String,
    limit: usize,
    trusted: keel_platform::config::TrustedProxies,
}

/// Headers that belong to one connection, never forwarded.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The API proxy's HTTP client could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the API proxy's client")]
pub struct ProxyClientError(#[source] reqwest::Error);

impl Proxy {
    pub fn new(
        base: &str,
        timeout: Duration,
        limit: usize,
        trusted: keel_platform::config::TrustedProxies,
    ) -> Result<Self, ProxyClientError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(5))
            .pool_idle_timeout(Duration::from_secs(60))
            .build()
            .map_err(ProxyClientError)?;
        Ok(Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            limit,
            trusted,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }
}

/// The headers of `from` that may cross: no hop-by-hop header, nothing the
/// `Connection` header names, no `Host`, no forwarding headers (we set our
/// own).
fn end_to_end(from: &HeaderMap, request: bool) -> HeaderMap {
    let named: Vec<String> = from
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .collect();
    let mut out = HeaderMap::with_capacity(from.len());
    for (name, value) in from {
        let n = name.as_str();
        let dropped = HOP_BY_HOP.contains(&n)
            || named.iter().any(|t| t == n)
            || (request && (name == HOST || n.starts_with("x-forwarded-") || n == "forwarded"));
        if !dropped {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

fn forwarded(proxy: &Proxy, incoming: &HeaderMap, peer: IpAddr) -> Vec<(HeaderName, String)> {
    let trusted = proxy.trusted.contains(&peer);
    let prior = |name: &str| {
        trusted
            .then(|| incoming.get(name).and_then(|v| v.to_str().ok()))
            .flatten()
            .map(str::to_owned)
    };
    let xff = match prior("x-forwarded-for") {
        Some(p) => format!("{p}, {peer}"),
        None => peer.to_string(),
    };
    let proto = prior("x-forwarded-proto").unwrap_or_else(|| "http".to_owned());
    let host = prior("x-forwarded-host").or_else(|| {
        incoming
            .get(HOST)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    let mut out = vec![
        (HeaderName::from_static("x-forwarded-for"), xff),
        (HeaderName::from_static("x-forwarded-proto"), proto),
    ];
    if let Some(h) = host {
        out.push((HeaderName::from_static("x-forwarded-host"), h));
    }
    out
}

/// The error envelope for a request to `path`.
fn failure(path: &str, e: Error) -> Response {
    let name = path.strip_prefix("/api/trpc/").unwrap_or(path).to_owned();
    e.with("path", name).into_response()
}

/// Every method of `/api/*`.
#[utoipa::path(method(get, post, put, patch, delete), path = "/api/{*path}", tag = "proxy",
    params(("path" = String, Path, description = "Any channel-api path (every method is forwarded)")),
    responses(
        (status = 200, description = "channel-api's answer, as it gave it"),
        (status = 413, description = "PAYLOAD_TOO_LARGE: the body is over the limit", body = crate::error::ErrorBody),
        (status = 502, description = "BAD_GATEWAY: channel-api is unreachable", body = crate::error::ErrorBody),
        (status = 504, description = "GATEWAY_TIMEOUT: channel-api took too long", body = crate::error::ErrorBody),
    ))]
pub async fn forward(
    State(state): State<WebState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let proxy = &state.proxy;
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_owned();
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let too_large = || error::proxied(ProxyFailure::TooLarge);
    if declared.is_some_and(|n| n > proxy.limit) {
        return BodyRead::default().close_if_unread(failure(&path, too_large()));
    }
    let target = format!(
        "{}{}",
        proxy.base,
        parts.uri.path_and_query().map_or("/", |p| p.as_str())
    );
    let mut headers = end_to_end(&parts.headers, true);
    for (name, value) in forwarded(proxy, &parts.headers, peer.ip()) {
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(name, v);
        }
    }
    let changes =
        parts.method != axum::http::Method::GET && parts.method != axum::http::Method::HEAD;
    let read = Arc::new(BodyRead::default());
    let stream = limited(body, proxy.limit, read.clone());
    let sent = proxy
        .client
        .request(parts.method, target)
        .headers(headers)
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await;
    let out = match sent {
        Ok(resp) => {
            if changes && resp.status().is_success() {
                state.changed();
            }
            let mut out = Response::builder().status(resp.status());
            if let Some(h) = out.headers_mut() {
                *h = end_to_end(resp.headers(), false);
            }
            out.body(Body::from_stream(resp.bytes_stream()))
                .unwrap_or_else(|_| failure(&path, error::proxied(ProxyFailure::Unreadable)))
        }
        Err(_) if read.over.load(Ordering::SeqCst) => failure(&path, too_large()),
        Err(e) if e.is_timeout() => failure(&path, error::proxied(ProxyFailure::Timeout)),
        Err(e) => {
            tracing::warn!(error = %e, base = proxy.base, "channel-api is unreachable");
            failure(&path, error::proxied(ProxyFailure::Unreachable))
        }
    };
    read.close_if_unread(out)
}

/// How far the client's body was read.
#[derive(Default)]
struct BodyRead {
    /// More than the limit came.
    over: AtomicBool,
    /// The body was read to its end.
    done: AtomicBool,
}

impl BodyRead {
    /// An answer given before the client's body was read to its end closes
    /// the connection (the client must not send its next request on it).
    fn close_if_unread(&self, mut resp: Response) -> Response {
        if !self.done.load(Ordering::SeqCst) {
            resp.headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
        }
        resp
    }
}

/// The request body as a stream that fails once more than `limit` bytes
/// came, noting in `read` how far it got.
fn limited(
    body: Body,
    limit: usize,
    read: Arc<BodyRead>,
) -> impl futures::Stream<Item = Result<axum::body::Bytes, std::io::Error>> + Send + 'static {
    let mut seen = 0usize;
    let end = read.clone();
    body.into_data_stream()
        .map(move |chunk| {
            let chunk = chunk.map_err(std::io::Error::other)?;
            seen = seen.saturating_add(chunk.len());
            if seen > limit {
                read.over.store(true, Ordering::SeqCst);
                return Err(std::io::Error::other("the request body is over the limit"));
            }
            Ok(chunk)
        })
        .chain(futures::stream::poll_fn(move |_| {
            end.done.store(true, Ordering::SeqCst);
            std::task::Poll::Ready(None)
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy(trusted: &[&str]) -> Proxy {
        keel_platform::crypto::install_crypto_provider();
        let trusted = trusted
            .iter()
            .filter_map(|t| t.parse::<IpAddr>().ok())
            .collect();
        Proxy::new("http://127.0.0.1:9", Duration::from_secs(1), 1024, trusted)
            .unwrap_or_else(|e| unreachable!("{e}"))
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(HeaderName::from_static(k), HeaderValue::from_static(v));
        }
        h
    }

    fn value(out: &[(HeaderName, String)], name: &str) -> Option<String> {
        out.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn forwarding_headers_are_believed_from_trusted_proxies_only() {
        let incoming = headers(&[
            ("host", "live.example.com"),
            ("x-forwarded-for", "6.6.6.6"),
            ("x-forwarded-proto", "https"),
        ]);
        let peer: IpAddr = "10.0.0.2".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let out = forwarded(&proxy(&[]), &incoming, peer);
        assert_eq!(value(&out, "x-forwarded-for").as_deref(), Some("10.0.0.2"));
        assert_eq!(value(&out, "x-forwarded-proto").as_deref(), Some("http"));
        assert_eq!(
            value(&out, "x-forwarded-host").as_deref(),
            Some("live.example.com")
        );
        let out = forwarded(&proxy(&["10.0.0.2"]), &incoming, peer);
        assert_eq!(
            value(&out, "x-forwarded-for").as_deref(),
            Some("6.6.6.6, 10.0.0.2")
        );
        assert_eq!(value(&out, "x-forwarded-proto").as_deref(), Some("https"));
    }

    #[test]
    fn hop_by_hop_and_connection_named_headers_do_not_cross() {
        let mut h = HeaderMap::new();
        for (k, v) in [
            ("connection", "keep-alive, x-secret"),
            ("keep-alive", "timeout=5"),
            ("x-secret", "1"),
            ("transfer-encoding", "chunked"),
            ("host", "live.example.com"),
            ("x-forwarded-for", "6.6.6.6"),
            ("cookie", "channel_session=abc"),
            ("content-type", "application/json"),
        ] {
            h.append(HeaderName::from_static(k), HeaderValue::from_static(v));
        }
        let out = end_to_end(&h, true);
        let names: Vec<&str> = out.keys().map(HeaderName::as_str).collect();
        assert_eq!(names, ["cookie", "content-type"]);
        let back = end_to_end(&h, false);
        assert!(back.contains_key("host") && back.contains_key("x-forwarded-for"));
        assert!(!back.contains_key("x-secret"));
    }
}
