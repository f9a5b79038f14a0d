//! Built web assets embedded in the binary (a front end's `assets/dist`,
//! made by `scripts/bundle.mjs`): names carry a content hash, so they are
//! cached for a year; each comes with gzip and brotli variants, chosen by
//! `Accept-Encoding`; `manifest.json` maps each entry to its built name.

use std::collections::HashMap;

use axum::body::Body;
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG, IF_NONE_MATCH, VARY,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

/// Entry name (`console.js`) → its built file (`console-HASH.js`); empty
/// when the folder has no manifest.
pub fn manifest<E: RustEmbed>() -> HashMap<String, String> {
    E::get("manifest.json")
        .and_then(|f| serde_json::from_slice(&f.data).ok())
        .unwrap_or_default()
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

/// The built file `file` of `E` (brotli or gzip when accepted; 304 when
/// the caller has it), or `None` when there is no such file (variants and
/// the manifest are not served by their own names).
pub fn serve<E: RustEmbed>(file: &str, headers: &HeaderMap) -> Option<Response> {
    if file.ends_with(".gz") || file.ends_with(".br") || file == "manifest.json" {
        return None;
    }
    let plain = E::get(file)?;
    let accept = headers
        .get(ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let variant = [("br", ".br"), ("gzip", ".gz")]
        .into_iter()
        .filter(|(coding, _)| accepts(accept, coding))
        .find_map(|(coding, ext)| E::get(&format!("{file}{ext}")).map(|f| (coding, f)));
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
            .insert(CONTENT_TYPE, HeaderValue::from_static(content_type(file)));
        resp
    };
    let h = resp.headers_mut();
    h.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    h.insert(VARY, HeaderValue::from_static("accept-encoding"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(ETAG, v);
    }
    Some(resp)
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
