//! The console's page: a shell at `/` whose script (`console.js`) draws
//! every view over `/console/v1` and nothing else. Its script and styles
//! are built from `crates/console/web` (npm packages pinned by its lock
//! file, bundled by the shared `scripts/bundle.mjs`) into `assets/dist`,
//! committed and embedded. Every answer forbids framing and inline script.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::get;
use keel_platform::http::{app_page, assets, escape_html};
use keel_platform::utoipa_axum::router::OpenApiRouter;
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "assets/dist"]
struct Dist;

static MANIFEST: LazyLock<HashMap<String, String>> = LazyLock::new(assets::manifest::<Dist>);

fn built(entry: &str) -> &str {
    app_page::built(&MANIFEST, entry)
}

pub fn router() -> OpenApiRouter {
    let page = shell();
    OpenApiRouter::new()
        .route(
            "/",
            get(move || async move { app_page::shell(page.clone()) }),
        )
        .route("/assets/{file}", get(asset))
}

async fn asset(Path(file): Path<String>, headers: HeaderMap) -> Response {
    app_page::asset::<Dist>(&file, &headers)
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
