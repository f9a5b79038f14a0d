//! The pages, rendered on the server (maud: checked when compiled, escaped
//! by default). Scripts are modules under /assets (no inline script: the
//! Content-Security-Policy forbids it); what a script needs from the server
//! is embedded as JSON in a `<script type="application/json">`.

pub mod channel;
pub mod dashboard;
pub mod login;
pub mod setup;

use axum::http::HeaderValue;
use axum::http::header::CACHE_CONTROL;
use axum::response::{IntoResponse, Response};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde::Serialize;

use super::{WebInner, assets};

/// What a page's `<head>` says.
pub struct Head<'a> {
    pub title: &'a str,
    pub description: &'a str,
    /// The page's path (`/`, `/dashboard`).
    pub path: &'a str,
    /// The page's script (a manifest entry), if any.
    pub script: Option<&'static str>,
    /// Pages not for search engines (the owner's).
    pub private: bool,
}

/// The whole document around a page's header and main part.
pub fn layout(
    s: &WebInner,
    logo: Option<&str>,
    head: &Head<'_>,
    header: &Markup,
    main: &Markup,
) -> Markup {
    let public = s.cfg.public_url.as_str().trim_end_matches('/');
    let url = format!("{public}{}", head.path);
    let image = logo.map(|l| format!("{public}{l}"));
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (head.title) }
                meta name="description" content=(head.description);
                @if head.private { meta name="robots" content="noindex"; }
                link rel="canonical" href=(url);
                meta property="og:type" content="website";
                meta property="og:title" content=(head.title);
                meta property="og:description" content=(head.description);
                meta property="og:url" content=(url);
                @if let Some(i) = &image { meta property="og:image" content=(i); }
                meta name="twitter:card" content="summary";
                meta name="twitter:title" content=(head.title);
                meta name="twitter:description" content=(head.description);
                @if let Some(i) = &image { meta name="twitter:image" content=(i); }
                meta name="theme-color" content="#6d28d9";
                meta name="trpc-transformer" content=(if s.cfg.superjson { "superjson" } else { "json" });
                link rel="icon" href=(logo.unwrap_or("data:,"));
                link rel="stylesheet" href=(assets::url("style.css"));
                @if let Some(script) = head.script {
                    script type="module" src=(assets::url(script)) {}
                }
            }
            body {
                a.skip-link href="#main" { "Skip to content" }
                (header)
                (main)
            }
        }
    }
}

/// The bar at the top: the channel's logo and title, and `nav`.
pub fn site_header(title: &str, logo: Option<&str>, nav: &Markup) -> Markup {
    html! {
        header.site-header {
            a.brand href="/" {
                @if let Some(l) = logo { img.site-logo src=(l) alt="" width="36" height="36"; }
                span { (title) }
            }
            nav aria-label="Site" { (nav) }
        }
    }
}

/// JSON for a page's script, safe inside `<script type="application/json">`.
pub fn data<T: Serialize>(id: &str, value: &T) -> Markup {
    let json = serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned());
    // No "</script>" (nor "<!--") can appear: every `<` is escaped.
    let safe = json
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    html! { script type="application/json" id=(id) { (PreEscaped(safe)) } }
}

/// The status region every action reports to.
pub fn status_region() -> Markup {
    html! { div #status.status role="status" aria-live="polite" hidden {} }
}

/// An HTML response with a `Cache-Control`.
pub fn respond(markup: Markup, cache: &'static str) -> Response {
    let mut resp = markup.into_response();
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    resp
}
