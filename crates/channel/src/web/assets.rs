//! The pages' scripts and styles: built by `crates/channel/web/build.mjs`
//! into `assets/dist` (committed) and embedded in the binary. Names carry
//! a content hash, so they are cached for a year; each comes with gzip and
//! brotli variants, chosen by `Accept-Encoding`.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::body::Body;
use axum::extract::Path;
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG, IF_NONE_MATCH, VARY,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

use crate::error::page;

#[derive(RustEmbed)]
#[folder = "assets/dist"]
struct Dist;

/// Entry name (`channel.js`) → its built file (`channel-HASH.js`).
static MANIFEST: LazyLock<HashMap<String, String>> = LazyLock::new(|| {
    Dist::get("manifest.json")
        .and_then(|f| serde_json::from_slice(&f.data).ok())
        .unwrap_or_default()
});

/// The URL of a built entry (`/assets/channel-HASH.js`); the unhashed name
/// if the manifest lacks it (then it 404s, and tests notice).
pub fn url(entry: &str) -> String {
    format!(
        "/assets/{}",
        MANIFEST.get(entry).map_or(entry, String::as_str)
    )
}

/// An entry the pages use was not built.
#[derive(Debug, thiserror::Error)]
#[error("the web assets lack {0}: run scripts/web-assets")]
pub struct MissingAsset(String);

/// Whether every entry the pages use was built.
pub fn complete(entries: &[&str]) -> Result<(), MissingAsset> {
    match entries.iter().find(|e| !MANIFEST.contains_key(**e)) {
        Some(missing) => Err(MissingAsset((*missing).to_owned())),
        None => Ok(()),
    }
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json") => "application/json",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Whether `accept` (an `Accept-Encoding` value) takes `coding`.
fn accepts(accept: &str, coding: &str) -> bool {
    accept.split(',').any(|part| {
        let mut it = part.split(';');
        let name = it.next().unwrap_or_default().trim();
        let refused = it.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q == 0.0)
        });
        name.eq_ignore_ascii_case(coding) && !refused
    })
}

/// `GET /assets/{file}`.
#[utoipa::path(get, path = "/assets/{file}", tag = "pages",
    params(("file" = String, Path, description = "A built file, e.g. channel-HASH.js")),
    responses(
        (status = 200, description = "The file (brotli or gzip when accepted); cached for a year"),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 404, description = "No such file"),
    ))]
pub async fn serve(Path(file): Path<String>, headers: HeaderMap) -> Response {
    if file.ends_with(".gz") || file.ends_with(".br") || file == "manifest.json" {
        return page(StatusCode::NOT_FOUND, "No such file");
    }
    let Some(plain) = Dist::get(&file) else {
        return page(StatusCode::NOT_FOUND, "No such file");
    };
    let accept = headers
        .get(ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let variant = [("br", ".br"), ("gzip", ".gz")]
        .into_iter()
        .filter(|(coding, _)| accepts(accept, coding))
        .find_map(|(coding, ext)| Dist::get(&format!("{file}{ext}")).map(|f| (coding, f)));
    // One tag per representation: the content's hash and its coding.
    let etag = format!(
        "\"{}{}\"",
        hex::encode(&plain.metadata.sha256_hash()[..16]),
        variant
            .as_ref()
            .map_or("", |(coding, _)| if *coding == "br" {
                "-br"
            } else {
                "-gz"
            })
    );
    let cache = if file == "LICENSES.txt" {
        "public, max-age=3600"
    } else {
        "public, max-age=31536000, immutable"
    };
    let not_modified = headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut resp = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut resp = match variant {
            Some((coding, f)) => {
                let mut r = Body::from(f.data.into_owned()).into_response();
                r.headers_mut()
                    .insert(CONTENT_ENCODING, HeaderValue::from_static(coding));
                r
            }
            None => Body::from(plain.data.into_owned()).into_response(),
        };
        resp.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(content_type(&file)));
        resp
    };
    let h = resp.headers_mut();
    h.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    h.insert(VARY, HeaderValue::from_static("accept-encoding"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(ETAG, v);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::accepts;

    #[test]
    fn accept_encoding_is_read_with_its_weights() {
        assert!(accepts("gzip, deflate, br", "br"));
        assert!(accepts("gzip;q=0.5", "gzip"));
        assert!(!accepts("gzip;q=0", "gzip"));
        assert!(!accepts("identity", "br"));
        assert!(!accepts("", "gzip"));
    }
}
