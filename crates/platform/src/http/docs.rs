//! `GET /docs`: every HTTP service's browsable API reference, Swagger UI on
//! the service's own `/openapi.json`, working offline: Swagger UI (npm
//! `swagger-ui-dist`, pinned in `crates/platform/web-docs`) is bundled into
//! `assets/docs` by `scripts/bundle.mjs` as every front end is, committed,
//! embedded in the binary and served by `assets`. And `GET /`, where a service has no page of its
//! own: a short index linking the reference, the document and the health
//! checks.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::http::HeaderValue;
use axum::http::header::CACHE_CONTROL;
use axum::response::{Html, IntoResponse, Response};
use rust_embed::RustEmbed;

use super::assets;
use super::error::{PlatformError, Render};
use super::escape_html;
use super::page_headers::{PageHeaders, Referrer};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(RustEmbed)]
#[folder = "assets/docs"]
struct Assets;

/// What the docs page may load: its own scripts and styles (Swagger UI
/// sets style attributes), images inline, and requests to this origin
/// ("Try it out").
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; \
frame-ancestors 'none'";

fn secured(resp: Response) -> Response {
    PageHeaders::fixed(POLICY, Referrer::None).apply(resp)
}

/// The built file of `entry` (`docs.js`), as the manifest names it.
fn built(entry: &str) -> String {
    assets::manifest::<Assets>()
        .remove(entry)
        .unwrap_or_else(|| entry.to_owned())
}

fn page(service: &str) -> String {
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>keel {service}: API reference</title>
<link rel="stylesheet" href="/docs/{style}">
</head>
<body>
<div id="swagger-ui"></div>
<script type="module" src="/docs/{script}"></script>
</body>
</html>
"#,
        service = escape_html(service),
        style = escape_html(&built("docs.css")),
        script = escape_html(&built("docs.js")),
    )
}

/// The API reference of this service (Swagger UI, offline).
#[utoipa::path(get, path = "/docs", tag = "docs",
    responses((status = 200, description = "The API reference page (HTML)", content_type = "text/html")))]
pub async fn reference(State((service, _)): State<(&'static str, Render)>) -> Response {
    secured(
        (
            [(CACHE_CONTROL, HeaderValue::from_static("no-cache"))],
            Html(page(service)),
        )
            .into_response(),
    )
}

/// A file of the reference page (its bundled script and stylesheet, their
/// licences), as every front end's files are served: hashed names cached
/// for a year, brotli or gzip as accepted.
#[utoipa::path(get, path = "/docs/{file}", tag = "docs",
    params(("file" = String, Path, description = "A built file the page names (`docs-HASH.js`, `docs-HASH.css`) or `LICENSES.txt`")),
    responses(
        (status = 200, description = "The file (brotli or gzip when accepted)"),
        (status = 304, description = "The caller has it"),
        (status = 404, description = "No such file"),
    ))]
pub async fn asset(
    State((_, render)): State<(&'static str, Render)>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    match assets::serve::<Assets>(&file, &headers) {
        Some(resp) => secured(resp),
        None => render(PlatformError::NotFound),
    }
}

/// The index a service without a page of its own answers at `/`.
pub fn index(service: &str) -> Response {
    Html(format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>keel {service}</title></head>
<body><h1>keel {service}</h1><ul>
<li><a href="/docs">API reference</a></li>
<li><a href="/openapi.json">OpenAPI document</a></li>
<li><a href="/healthz">/healthz</a> and <a href="/readyz">/readyz</a></li>
</ul></body></html>
"#
    ))
    .into_response()
}

/// The reference's routes, documented.
pub fn routes(service: &'static str, render: Render) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(reference))
        .routes(routes!(asset))
        .with_state((service, render))
}
