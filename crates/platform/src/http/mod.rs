//! The HTTP platform: the layers every service listener gets, and the
//! launch function (a listener and a shutdown signal in, a server out).

pub mod api_error;
pub mod app_page;
pub mod assets;
pub mod body_guard;
pub mod cookies;
pub mod docs;
mod drain;
mod error;
mod extractors;
pub mod health;
pub mod input;
pub mod json;
pub mod lag;
mod layers;
mod no_store;
pub mod openapi;
pub mod page_headers;
pub mod patterns;
mod slow;
pub mod starting;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::get;
use tokio_util::sync::CancellationToken;
use tower_http::CompressionLevel;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa::openapi::OpenApi;
use utoipa_axum::router::OpenApiRouter;

pub use api_error::{ApiError, ClientError, WireShape};
pub use body_guard::stream_body;
pub use error::{PlatformError, Render};
pub use health::Readiness;
pub use json::{Json, JsonBytes};
pub use no_store::NoStore;
pub use page_headers::{PageHeaders, Referrer};
pub use starting::{Handover, SharedListener, Startup, Takeover, takeover};

/// `s` safe inside HTML text and double-quoted attribute values.
pub fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

use crate::config::HttpConfig;

/// A service's routes with what the platform needs to finish them.
pub struct ServiceApp {
    pub name: &'static str,
    /// Where the service's routes start (`""`, or e.g. `/svc/v1`).
    pub base_path: String,
    pub routes: OpenApiRouter,
    pub render: Render,
}

/// Adds health, OpenAPI, fallbacks and the standard layers: request id,
/// tracing span, body panic guard, compression ([`compress`]), metrics,
/// panic → 500, timeout, body limit.
pub fn finish(app: ServiceApp, readiness: Readiness, cfg: &HttpConfig) -> Router {
    let render = app.render;
    let reach = readiness.db.reach().clone();
    // Metrics recorded before the recorder exists are lost: install it now.
    crate::telemetry::prometheus();
    let (router, openapi) = app
        .routes
        .merge(health::routes(readiness))
        .merge(docs::routes(app.name, render))
        .split_for_parts();
    let openapi = openapi_json(app.name, openapi);
    // A database that can be partitioned away (PostgreSQL) bounds the wait.
    let router = if reach.is_watched() {
        router.layer(middleware::from_fn_with_state(
            (reach, render),
            layers::database_away,
        ))
    } else {
        router
    };
    router
        .route(
            "/openapi.json",
            get(move || {
                let json = openapi.clone();
                async move { ([(http::header::CONTENT_TYPE, "application/json")], json) }
            }),
        )
        .fallback(move |uri: http::Uri| async move {
            // A service without a page of its own links its reference at `/`.
            if uri.path() == "/" {
                docs::index(app.name)
            } else {
                render(PlatformError::NotFound)
            }
        })
        .method_not_allowed_fallback(move || async move { render(PlatformError::MethodNotAllowed) })
        .layer(middleware::from_fn(drain::drain_unread))
        .layer(middleware::from_fn_with_state(render, layers::refuse_nul))
        .layer(DefaultBodyLimit::max(cfg.body_limit))
        .layer(middleware::from_fn_with_state(
            (cfg.request_timeout, render),
            layers::timeout,
        ))
        .layer(CatchPanicLayer::custom(layers::panic_response(render)))
        .layer(middleware::from_fn_with_state(app.name, layers::metrics))
        .layer(middleware::from_fn(layers::mark_credentialed))
        .layer(compress())
        .layer(middleware::from_fn_with_state(
            app.name,
            body_guard::guard_bodies,
        ))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(layers::span_for(app.name))
                .on_response(layers::record_status),
        )
        .layer(PropagateRequestIdLayer::new(layers::REQUEST_ID))
        .layer(middleware::from_fn_with_state(
            cfg.slow_request,
            slow::slow_requests,
        ))
        .layer(SetRequestIdLayer::new(layers::REQUEST_ID, MakeRequestUuid))
}

/// Marks a response that streams what becomes ready (tRPC's JSONL batch):
/// it is not compressed, since a compressor holds back each line until it
/// has enough to fill a block, and proxies are asked not to buffer it
/// (nginx reads this header).
pub const STREAMING: (http::HeaderName, http::HeaderValue) = (
    http::HeaderName::from_static("x-accel-buffering"),
    http::HeaderValue::from_static("no"),
);

/// Answers of at least [`COMPRESS_FROM`] bytes are gzipped at level 1 for
/// a client that accepts it; never a streamed answer, an image, events, or
/// an answer to a request that carried a cookie (BREACH, see
/// [`layers::no_ambient_credentials`]).
///
/// Not brotli, and not a small answer: a compressor's set-up (brotli's
/// hash tables are megabytes, zeroed for each answer; deflate's state a
/// few hundred kilobytes) costs more than the rest of a small request, and
/// under load those bursts of allocation held the runtime thread for tens
/// of milliseconds (docs/performance.md, "Latency at a given load"). An
/// answer under 4 KiB saves at most a few kilobytes and no round trip
/// (it fits TCP's first flight either way). The static files keel serves
/// are compressed once, at build time, brotli included. Level 1, not the
/// usual 6 or the 4 before: a 10 KB page of GET /history compresses to
/// 1,465 bytes (1,440 at level 4), and per-answer gzip at level 4 took
/// GET /history's p99 at half its sustainable rate from 1.0-1.2 ms
/// (uncompressed) to 1.8-3.0 ms; at level 1 it measured 1.1 ms.
fn compress() -> CompressionLayer<impl Predicate> {
    CompressionLayer::new()
        .quality(CompressionLevel::Fastest)
        .compress_when(
            SizeAbove::new(COMPRESS_FROM)
                .and(NotForContentType::GRPC)
                .and(NotForContentType::IMAGES)
                .and(NotForContentType::SSE)
                .and(not_streaming)
                .and(layers::no_ambient_credentials),
        )
}

/// The smallest answer [`compress`] compresses, in bytes.
pub const COMPRESS_FROM: u16 = 4096;

fn not_streaming(
    _: http::StatusCode,
    _: http::Version,
    headers: &http::HeaderMap,
    _: &http::Extensions,
) -> bool {
    !headers.contains_key(&STREAMING.0)
}

fn openapi_json(name: &str, mut doc: OpenApi) -> String {
    doc.info = utoipa::openapi::InfoBuilder::new()
        .title(format!("keel {name}"))
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some(format!(
            "The {name} service of keel. No string a request sends (in its path, query or body) may hold the NUL character (U+0000): such a request is answered 400."
        )))
        .build();
    openapi::finish(&mut doc);
    let mut json = serde_json::to_value(&doc).unwrap_or_else(|e| {
        tracing::error!(error = %e, "cannot serialise the OpenAPI document");
        serde_json::Value::Null
    });
    openapi::spell_out_patterns(&mut json);
    json.to_string()
}

/// Serves `router` on `listener` until `shutdown`; then stops accepting,
/// lets in-flight requests finish for up to `grace`, and returns.
pub async fn serve(
    listener: impl Into<SharedListener>,
    router: Router,
    shutdown: CancellationToken,
    grace: Duration,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let service = router.into_make_service_with_connect_info::<SocketAddr>();
    // No Nagle: an answer's last partial segment, or a streamed body's
    // small chunks, would otherwise wait for the client's (delayed) ACK.
    // (tap_io also gives the shared listener's connections their peer
    // address.)
    let listener = listener.into().tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY not set");
        }
    });
    let server = axum::serve(listener, service)
        .with_graceful_shutdown(shutdown.clone().cancelled_owned())
        .into_future();
    tokio::pin!(server);
    tokio::select! {
        r = &mut server => r,
        () = async { shutdown.cancelled().await; tokio::time::sleep(grace).await } => {
            tracing::warn!(?grace, "shutdown grace elapsed; dropping requests still in flight");
            Ok(())
        }
    }
}

/// The client's address of a request: [`client_ip`] of the peer the
/// connection came from (loopback when the server did not record it).
pub fn request_client_ip(
    parts: &http::request::Parts,
    trusted: &crate::config::TrustedProxies,
) -> std::net::IpAddr {
    let peer = parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map_or(std::net::IpAddr::from([127, 0, 0, 1]), |c| c.0.ip());
    client_ip(peer, &parts.headers, trusted)
}

/// The client's address: the peer's, unless the peer is a trusted proxy, in
/// which case the right-most `X-Forwarded-For` entry that is not itself a
/// trusted proxy.
pub fn client_ip(
    peer: std::net::IpAddr,
    headers: &http::HeaderMap,
    trusted: &crate::config::TrustedProxies,
) -> std::net::IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let chain: Vec<std::net::IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|s| s.split(','))
        .filter_map(|p| p.trim().parse().ok())
        .collect();
    chain
        .iter()
        .rev()
        .find(|ip| !trusted.contains(ip))
        .or(chain.first())
        .copied()
        .unwrap_or(peer)
}

#[cfg(test)]
mod tests {
    use super::client_ip;
    use std::net::IpAddr;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or(IpAddr::from([0, 0, 0, 0]))
    }

    #[test]
    fn forwarded_for_is_believed_only_from_a_trusted_proxy() {
        let mut h = http::HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            http::HeaderValue::from_static("1.1.1.1, 10.0.0.2"),
        );
        let trusted: crate::config::TrustedProxies =
            [ip("10.0.0.1"), ip("10.0.0.2")].into_iter().collect();
        assert_eq!(client_ip(ip("9.9.9.9"), &h, &trusted), ip("9.9.9.9"));
        assert_eq!(client_ip(ip("10.0.0.1"), &h, &trusted), ip("1.1.1.1"));
        assert_eq!(
            client_ip(ip("10.0.0.1"), &http::HeaderMap::new(), &trusted),
            ip("10.0.0.1")
        );
    }

    #[test]
    fn a_trusted_network_covers_every_address_in_it() {
        let src = crate::config::Source::from_pairs([(
            "KEEL_TRUSTED_PROXIES",
            "10.0.0.0/8, 192.168.1.7, fd00::/8",
        )]);
        let cfg = crate::config::PlatformConfig::from_source(&src).expect("valid");
        let trusted = &cfg.http.trusted_proxies;
        for yes in ["10.1.2.3", "192.168.1.7", "::ffff:10.9.9.9", "fd00::1"] {
            assert!(trusted.contains(&ip(yes)), "{yes}");
        }
        for no in ["11.0.0.1", "192.168.1.8", "fe80::1"] {
            assert!(!trusted.contains(&ip(no)), "{no}");
        }
        let mut h = http::HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            http::HeaderValue::from_static("1.1.1.1, 10.4.4.4"),
        );
        assert_eq!(client_ip(ip("10.0.0.9"), &h, trusted), ip("1.1.1.1"));
        let bad = crate::config::Source::from_pairs([("KEEL_TRUSTED_PROXIES", "10.0.0.0/33")]);
        let err = crate::config::PlatformConfig::from_source(&bad)
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("KEEL_TRUSTED_PROXIES")));
    }
}
