//! `GET /docs`: every HTTP service's browsable API reference, Swagger UI on
//! the service's own `/openapi.json`, working offline: Swagger UI's
//! distribution (npm `swagger-ui-dist`, pinned in `crates/platform/web-docs`)
//! is copied into `assets/docs` by `scripts/web-assets`, committed, and
//! embedded in the binary. And `GET /`, where a service has no page of its
//! own: a short index linking the reference, the document and the health
//! checks.

use axum::extract::Path;
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_SECURITY_POLICY, CONTENT_TYPE, VARY,
};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{Html, IntoResponse, Response};
use rust_embed::RustEmbed;

use super::error::{PlatformError, Render};
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

fn page(service: &str) -> String {
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>keel {service}: API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
"#
    )
}

/// The API reference of this service (Swagger UI, offline).
#[utoipa::path(get, path = "/docs", tag = "docs",
    responses((status = 200, description = "The API reference page (HTML)", content_type = "text/html")))]
pub async fn reference(
    axum::extract::State((service, _)): axum::extract::State<(&'static str, Render)>,
) -> Response {
    (
        [
            (CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY)),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        Html(page(service)),
    )
        .into_response()
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    }
}

/// A file of the reference page (Swagger UI's bundle, its stylesheet).
#[utoipa::path(get, path = "/docs/{file}", tag = "docs",
    params(("file" = String, Path, description = "`swagger-ui-bundle.js`, `swagger-ui.css`, `init.js` or `LICENSES.txt`")),
    responses(
        (status = 200, description = "The file (brotli when accepted)"),
        (status = 404, description = "No such file"),
    ))]
pub async fn asset(
    axum::extract::State((_, render)): axum::extract::State<(&'static str, Render)>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    let brotli = headers
        .get(ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|c| c.trim().starts_with("br")));
    let compressed = brotli.then(|| Assets::get(&format!("{file}.br"))).flatten();
    let (body, encoded) = match (compressed, Assets::get(&file)) {
        (Some(c), Some(_)) => (c.data, true),
        (_, Some(plain)) if !file.ends_with(".br") => (plain.data, false),
        _ => return render(PlatformError::NotFound),
    };
    let mut resp = (
        [
            (CONTENT_TYPE, HeaderValue::from_static(content_type(&file))),
            (
                CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=86400"),
            ),
            (VARY, HeaderValue::from_static("Accept-Encoding")),
        ],
        body.into_owned(),
    )
        .into_response();
    if encoded {
        resp.headers_mut()
            .insert(CONTENT_ENCODING, HeaderValue::from_static("br"));
    }
    resp
}

/// The index a service without a page of its own answers at `/`.
pub fn index(service: &str) -> Response {
    index_with(service, &[])
}

/// The index, with the service's own pages (`(href, text)`) listed first.
pub fn index_with(service: &str, pages: &[(&str, &str)]) -> Response {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;")
    };
    let own: String = pages
        .iter()
        .map(|(href, text)| format!("<li><a href=\"{}\">{}</a></li>\n", esc(href), esc(text)))
        .collect();
    Html(format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>keel {service}</title></head>
<body><h1>keel {service}</h1><ul>
{own}<li><a href="/docs">API reference</a></li>
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
