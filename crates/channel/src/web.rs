//! channel-web errors: a small HTML page with the status.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use keel_platform::http::PlatformError;

/// Renders platform errors for channel-web.
pub fn render(e: PlatformError) -> Response {
    page(e.status(), &e.message())
}

pub fn page(status: StatusCode, message: &str) -> Response {
    let title = status.canonical_reason().unwrap_or("Error");
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{code} {title}</h1><p>{message}</p></body></html>",
        code = status.as_u16(),
        message = escape(message),
    );
    (status, Html(body)).into_response()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
