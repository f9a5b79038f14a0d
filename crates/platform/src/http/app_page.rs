//! A console's page, served one way for every console (svc's admins', the
//! operators'): a shell of HTML whose script draws every view, and the
//! script and styles built into the crate's `assets/dist`. Every answer
//! carries the one strict policy: scripts and styles from the console's
//! own files only, calls to its own origin only, never in a frame, no
//! referrer.

use std::collections::HashMap;

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

use super::{PageHeaders, Referrer, assets};

/// The policy of every console page and file.
pub const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

fn headers() -> PageHeaders {
    PageHeaders::fixed(POLICY, Referrer::None)
}

/// The built name of `entry` (`console.js` → `console-HASH.js`), or the
/// entry's own when it was not built (then it 404s, and the browser tests
/// notice).
pub fn built<'a>(manifest: &'a HashMap<String, String>, entry: &'a str) -> &'a str {
    manifest.get(entry).map_or(entry, String::as_str)
}

/// The shell: HTML, never stored, with the console's headers.
pub fn shell(html: String) -> Response {
    let fixed: [(HeaderName, HeaderValue); 2] = [
        (
            CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        ),
        (CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    headers().apply((fixed, html).into_response())
}

/// A built script or style sheet of `E` (cached for a year: its name
/// changes with its content), or 404; with the console's headers.
pub fn asset<E: RustEmbed>(file: &str, request: &HeaderMap) -> Response {
    let resp = assets::serve::<E>(file, request)
        .unwrap_or_else(|| (StatusCode::NOT_FOUND, "No such file").into_response());
    headers().apply(resp)
}
