//! The admin console: pages at `<REST root>/svc/admin/` for the people who
//! send pushes, over svc's own API and nothing else (every call it makes
//! is a route of `/openapi.json`, with the admin's cookie session and its
//! nonce). The page is a shell; `console.js` draws the views. Its script
//! and styles are built from `crates/svc/web` (npm packages pinned by its
//! lock file, bundled by `scripts/web-assets`) into `assets/dist`,
//! committed, and embedded in the binary.
//!
//! Every answer forbids framing and inline script: the console adds no way
//! in that the API does not have.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::Router;
use axum::extract::Path;
use axum::http::HeaderMap;
use axum::response::{Redirect, Response};
use axum::routing::get;
use keel_platform::http::{app_page, assets, escape_html};
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "assets/dist"]
struct Dist;

/// Entry name (`console.js`) → its built file (`console-HASH.js`).
static MANIFEST: LazyLock<HashMap<String, String>> = LazyLock::new(assets::manifest::<Dist>);

fn built(entry: &str) -> &str {
    app_page::built(&MANIFEST, entry)
}

/// The console's routes, at `at` (`<REST root>/svc/admin`), calling the API
/// at `api` (`<REST root>/svc/v1`); and svc's `/`, the index of every
/// service with the console listed first.
pub fn router(at: &str, api: &str) -> Router {
    let page = shell(at, api);
    let home = format!("{at}/");
    let console_link = home.clone();
    Router::new()
        .route(
            "/",
            get(move || async move {
                keel_platform::http::docs::index_with(
                    crate::NAME,
                    &[(console_link.as_str(), "Admin console (sign in)")],
                )
            }),
        )
        .route(
            at,
            get({
                let home = home.clone();
                move || async move { Redirect::permanent(&home) }
            }),
        )
        .route(
            &home,
            get(move || async move { app_page::shell(page.clone()) }),
        )
        .route(&format!("{at}/assets/{{file}}"), get(asset))
}

async fn asset(Path(file): Path<String>, headers: HeaderMap) -> Response {
    app_page::asset::<Dist>(&file, &headers)
}

/// The page every view is drawn in.
fn shell(at: &str, api: &str) -> String {
    let esc = escape_html;
    format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc console</title>
<link rel="stylesheet" href="{at}/assets/{style}">
<script type="module" src="{at}/assets/{script}"></script>
</head>
<body data-api="{api}">
<header class="bar">
<span class="brand">svc console</span>
<nav id="nav" aria-label="Console" hidden>
<a href="#/sends">Sends</a>
<a href="#/compose">New send</a>
<a href="#/stats">Statistics</a>
<a href="#/devices">Devices</a>
<a href="#/forms">Forms</a>
<a href="#/settings">Settings</a>
<a href="#/passwords">App passwords</a>
<a href="#/audit">Audit log</a>
<a href="#/admins" id="nav-admins" hidden>Admins</a>
<button type="button" id="sign-out" class="link">Sign out</button>
</nav>
</header>
<main id="view" tabindex="-1"><p>Loading…</p></main>
</body>
</html>
"##,
        at = esc(at),
        api = esc(api),
        script = esc(built("console.js")),
        style = esc(built("console.css")),
    )
}
