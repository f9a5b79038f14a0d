//! Middleware functions and span makers used by `finish`.

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::HeaderName;
use axum::middleware::Next;
use axum::response::Response;

use super::{PlatformError, Render};
use crate::observe::trace;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// One span per request, with the same fields whether traces are on or
/// not (log lines carry them too): the method, the route template
/// (`/goals/weekly/{id}`, never the raw path: paths carry tokens), the
/// service and the request id. When traces are on it is also the request's
/// server span, named `GET /goals/weekly/{id}`, with the status, and the
/// child of the caller's `traceparent` when the request carries one; these
/// are its only attributes.
pub fn span_for(service: &'static str) -> impl Fn(&Request<Body>) -> tracing::Span + Clone {
    move |req: &Request<Body>| {
        let id = req
            .headers()
            .get(&REQUEST_ID)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let route = req
            .extensions()
            .get::<MatchedPath>()
            .map_or("unmatched", MatchedPath::as_str);
        if !trace::enabled() {
            return tracing::info_span!(
                "request",
                http.request.method = %req.method(),
                http.route = route,
                keel.service = service,
                keel.request_id = %id,
            );
        }
        let span = tracing::info_span!(
            "request",
            otel.name = %format_args!("{} {route}", req.method()),
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            http.request.method = %req.method(),
            http.route = route,
            http.response.status_code = tracing::field::Empty,
            keel.service = service,
            keel.request_id = %id,
        );
        crate::observe::trace::adopt_parent(&span, req.headers());
        span
    }
}

/// Records the answer's status on the request's span, and an error status
/// for a 5xx as the HTTP conventions say for a server span. The status is
/// recorded as an i64: the OpenTelemetry layer turns an unsigned number
/// into text.
pub fn record_status(resp: &Response, _latency: Duration, span: &tracing::Span) {
    if trace::enabled() {
        let status = resp.status();
        span.record("http.response.status_code", i64::from(status.as_u16()));
        if status.is_server_error() {
            span.record("otel.status_code", "ERROR");
        }
    }
}

/// A panic becomes a 500 in the service's shape.
pub fn panic_response(
    render: Render,
) -> impl Fn(Box<dyn std::any::Any + Send + 'static>) -> Response + Clone {
    move |panic| {
        let what = crate::failure::panic_text(panic.as_ref());
        tracing::error!(panic = %what, "a request handler panicked");
        render(PlatformError::Internal)
    }
}

/// Answers in the service's shape when a request runs longer than the limit.
pub async fn timeout(
    State((limit, render)): State<(Duration, Render)>,
    req: Request,
    next: Next,
) -> Response {
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => render(PlatformError::Timeout),
    }
}

/// Refuses a path or query string holding the NUL character (`%00`), as
/// bodies are ([`super::input::refuse_nul`]): no text keel stores or looks
/// up may hold one.
pub async fn refuse_nul(State(render): State<Render>, req: Request, next: Next) -> Response {
    let uri = req.uri();
    let nul = |s: &str| {
        s.as_bytes()
            .windows(3)
            .any(|w| w.eq_ignore_ascii_case(b"%00"))
    };
    if nul(uri.path()) || uri.query().is_some_and(nul) {
        return render(PlatformError::BadRequest(
            super::input::NUL_REFUSED.to_owned(),
        ));
    }
    next.run(req).await
}

/// Answers 503 a request still running [`crate::db::reach::GRACE`] after
/// the database stopped answering altogether (a partition), rather than
/// let it wait for the request timeout.
pub async fn database_away(
    State((reach, render)): State<(crate::db::reach::Reach, Render)>,
    req: Request,
    next: Next,
) -> Response {
    tokio::select! {
        resp = next.run(req) => resp,
        () = reach.away_for(crate::db::reach::GRACE) => render(PlatformError::Unavailable),
    }
}

/// Request count and latency by service, method, route and status.
pub async fn metrics(State(service): State<&'static str>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().as_str().to_owned();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let resp = next.run(req).await;
    let labels = [
        ("service", service.to_owned()),
        ("method", method),
        ("route", route),
        ("status", resp.status().as_u16().to_string()),
    ];
    metrics::counter!("keel_http_requests_total", &labels).increment(1);
    metrics::histogram!("keel_http_request_duration_seconds", &labels)
        .record(started.elapsed().as_secs_f64());
    resp
}

/// Marks the answer to a request that carried a cookie: the credential a
/// browser attaches by itself, even to a request another site makes it
/// send.
#[derive(Clone, Copy)]
struct Credentialed;

pub async fn mark_credentialed(req: Request, next: Next) -> Response {
    let cookie = req.headers().contains_key(http::header::COOKIE);
    let mut resp = next.run(req).await;
    if cookie {
        resp.extensions_mut().insert(Credentialed);
    }
    resp
}

/// Whether an answer may be compressed: not when its request carried a
/// cookie, unless the answer is public (`Cache-Control: public`, the same
/// for everyone). Compressing a secret (a session's nonce, a stream key)
/// beside input an attacker chose lets the attacker read the secret from
/// the answers' sizes (BREACH), and a browser sends the cookie with the
/// requests another site makes it send. Bearer tokens are not attached by
/// browsers, so those answers are compressed.
pub fn no_ambient_credentials(
    _: http::StatusCode,
    _: http::Version,
    headers: &http::HeaderMap,
    extensions: &http::Extensions,
) -> bool {
    extensions.get::<Credentialed>().is_none()
        || headers
            .get(http::header::CACHE_CONTROL)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.split(',')
                    .any(|d| d.trim().eq_ignore_ascii_case("public"))
            })
}
