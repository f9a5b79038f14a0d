//! The console's page: a shell at `/` whose script (`console.js`) draws
//! every view over `/console/v1` and nothing else. Its script and styles
//! are built from `crates/console/web` (npm packages pinned by its lock
//! file, bundled by the shared `scripts/bundle.mjs`) into `assets/dist`,
//! committed and embedded. Every answer forbids framing and inline script.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use keel_platform::http::{PageHeaders, Referrer, assets, escape_html};
use keel_platform::utoipa_axum::router::OpenApiRouter;
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "assets/dist"]
struct Dist;

static MANIFEST: LazyLock<HashMap<String, String>> = LazyLock::new(assets::manifest::<Dist>);

fn built(entry: &str) -> &str {
    MANIFEST.get(entry).map_or(entry, String::as_str)
}

/// Its own scripts and styles only; calls to its own origin only; never
/// in a frame.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

pub fn router() -> OpenApiRouter {
    let page = shell();
    OpenApiRouter::new()
        .route(
            "/",
            get(move || async move { secured(page.clone(), "text/html; charset=utf-8") }),
        )
        .route("/assets/{file}", get(asset))
}

async fn asset(Path(file): Path<String>, headers: HeaderMap) -> Response {
    let resp = assets::serve::<Dist>(&file, &headers)
        .unwrap_or_else(|| (StatusCode::NOT_FOUND, "No such file").into_response());
    secure(resp)
}

fn secure(resp: Response) -> Response {
    PageHeaders::fixed(POLICY, Referrer::None).apply(resp)
}

fn secured(body: String, kind: &'static str) -> Response {
    let headers: [(HeaderName, HeaderValue); 2] = [
        (CONTENT_TYPE, HeaderValue::from_static(kind)),
        (CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    secure((headers, body).into_response())
}

fn shell() -> String {
    format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>keel console</title>
<link rel="stylesheet" href="/assets/{style}">
<script type="module" src="/assets/{script}"></script>
</head>
<body>
<header class="bar">
<span class="brand">keel console</span>
<nav id="nav" aria-label="Console" hidden></nav>
</header>
<main id="view" tabindex="-1"><p>Loading…</p></main>
</body>
</html>
"##,
        script = escape_html(built("console.js")),
        style = escape_html(built("console.css")),
    )
}
