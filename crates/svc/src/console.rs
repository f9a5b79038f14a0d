//! The admin console: pages at `<REST root>/svc/admin/` for the people who
//! send pushes, over svc's own API and nothing else (every call it makes
//! is a route of `/openapi.json`, with the admin's cookie session and its
//! nonce). The page is a shell; `console.js` draws the views. Both files
//! are in the binary (`crates/svc/console`).
//!
//! Every answer forbids framing and inline script: the console adds no way
//! in that the API does not have.

use axum::Router;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::{HeaderName, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

const SCRIPT: &str = include_str!("../console/console.js");
const STYLE: &str = include_str!("../console/console.css");

/// Scripts and styles from the console's own files only; calls to its own
/// origin only; never in a frame.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

/// The console's routes, at `at` (`<REST root>/svc/admin`), calling the API
/// at `api` (`<REST root>/svc/v1`).
pub fn router(at: &str, api: &str) -> Router {
    let page = shell(at, api);
    let home = format!("{at}/");
    Router::new()
        .route(
            at,
            get({
                let home = home.clone();
                move || async move { Redirect::permanent(&home) }
            }),
        )
        .route(&home, get(move || async move { secured(page.clone(), "text/html; charset=utf-8", "no-store") }))
        .route(
            &format!("{at}/console.js"),
            get(|| async { secured(SCRIPT.to_owned(), "text/javascript; charset=utf-8", "no-cache") }),
        )
        .route(
            &format!("{at}/console.css"),
            get(|| async { secured(STYLE.to_owned(), "text/css; charset=utf-8", "no-cache") }),
        )
}

fn secured(body: String, kind: &'static str, cache: &'static str) -> Response {
    let headers: [(HeaderName, HeaderValue); 6] = [
        (CONTENT_TYPE, HeaderValue::from_static(kind)),
        (CACHE_CONTROL, HeaderValue::from_static(cache)),
        (CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY)),
        (X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        (REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
    ];
    (headers, body).into_response()
}

/// The page every view is drawn in.
fn shell(at: &str, api: &str) -> String {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;")
    };
    format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc console</title>
<link rel="stylesheet" href="{at}/console.css">
<script type="module" src="{at}/console.js"></script>
</head>
<body data-api="{api}">
<header class="bar">
<span class="brand">svc console</span>
<nav id="nav" aria-label="Console" hidden>
<a href="#/sends">Sends</a>
<a href="#/compose">New send</a>
<a href="#/devices">Devices</a>
<a href="#/settings">Settings</a>
<a href="#/audit">Audit log</a>
<button type="button" id="sign-out" class="link">Sign out</button>
</nav>
</header>
<main id="view" tabindex="-1"><p>Loading…</p></main>
</body>
</html>
"##,
        at = esc(at),
        api = esc(api),
    )
}
