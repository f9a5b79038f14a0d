//! The pages' scripts and styles: built by `crates/channel/web/build.mjs`
//! into `assets/dist` (committed) and embedded in the binary. Names carry
//! a content hash, so they are cached for a year; each comes with gzip and
//! brotli variants, chosen by `Accept-Encoding`.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use keel_platform::http::assets;
use rust_embed::RustEmbed;

use crate::error::page;

#[derive(RustEmbed)]
#[folder = "assets/dist"]
struct Dist;

/// Entry name (`channel.js`) → its built file (`channel-HASH.js`).
static MANIFEST: LazyLock<HashMap<String, String>> = LazyLock::new(assets::manifest::<Dist>);

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

/// `GET /assets/{file}`.
#[utoipa::path(get, path = "/assets/{file}", tag = "pages",
    params(("file" = String, Path, description = "A built file, e.g. channel-HASH.js")),
    responses(
        (status = 200, description = "The file (brotli or gzip when accepted); cached for a year"),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 404, description = "No such file"),
    ))]
pub async fn serve(Path(file): Path<String>, headers: HeaderMap) -> Response {
    assets::serve::<Dist>(&file, &headers)
        .unwrap_or_else(|| page(StatusCode::NOT_FOUND, "No such file"))
}
