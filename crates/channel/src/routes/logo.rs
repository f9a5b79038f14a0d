//! `POST /api/upload/logo` (the owner, multipart field `file`) and
//! `GET /api/logo/{hash}.png` (content-addressed: cached for a year).

use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Path, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use keel_platform::http::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::OwnerOnly;
use crate::domain::channel::logo_url;
use crate::domain::logo::{self, MAX_BYTES};
use crate::error::{self, Error, ErrorBody, LogoUpload};
use crate::routes::failures::*;
use crate::state::AppState;

/// The upload's whole body may be this much over the image's limit.
pub const BODY_LIMIT: usize = MAX_BYTES + 64 * 1024;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Uploaded {
    /// The logo's new URL.
    logo_url: String,
    width: u32,
    height: u32,
}

/// The multipart body of an upload, as it is read.
#[derive(ToSchema)]
pub struct LogoForm {
    /// PNG, JPEG, GIF or WebP, at most 2 MiB.
    #[schema(value_type = String, format = Binary)]
    file: axum::body::Bytes,
}

impl LogoForm {
    /// Reads the first field named `file`.
    async fn read(req: Request, state: &AppState) -> Result<Self, Error> {
        let mut form = Multipart::from_request(req, state).await.map_err(|r| {
            error::bad_upload(match r.status() {
                StatusCode::PAYLOAD_TOO_LARGE => LogoUpload::TooLarge,
                _ => LogoUpload::NotMultipart,
            })
        })?;
        while let Some(field) = form.next_field().await.map_err(multipart_error)? {
            if field.name() == Some("file") {
                let file = field.bytes().await.map_err(multipart_error)?;
                return Ok(Self { file });
            }
        }
        Err(error::bad_upload(LogoUpload::NoFile))
    }
}

fn multipart_error(e: axum::extract::multipart::MultipartError) -> Error {
    error::bad_upload(match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => LogoUpload::TooLarge,
        _ => LogoUpload::Broken(e.body_text()),
    })
}

/// Upload a new logo: judged by its content, scaled to fit 512×512,
/// stored as PNG without metadata.
#[utoipa::path(post, path = "/api/upload/logo", tag = "logo", security(("session" = [])),
    request_body(content = LogoForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, body = Uploaded),
        (status = 400, description = "BAD_REQUEST: not an image, or no file", body = ErrorBody),
        NotOwner,
        (status = 413, description = "PAYLOAD_TOO_LARGE: over 2 MiB", body = ErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE: not PNG, JPEG, GIF or WebP", body = ErrorBody),
    ))]
pub async fn upload(
    State(state): State<AppState>,
    _owner: OwnerOnly,
    req: Request,
) -> Result<Json<Uploaded>, Error> {
    let LogoForm { file } = LogoForm::read(req, &state).await?;
    let processed = tokio::task::spawn_blocking(move || logo::process(&file))
        .await
        .map_err(Error::internal)??;
    let (width, height) = (processed.width, processed.height);
    let hash = logo::store(&state.platform.db, processed).await?;
    state.info.invalidate();
    Ok(Json(Uploaded {
        logo_url: logo_url(&hash),
        width,
        height,
    }))
}

/// A stored logo. Its URL changes with its content, so it may be cached
/// for a year; `If-None-Match` with its ETag answers 304.
#[utoipa::path(get, path = "/api/logo/{file}", tag = "logo",
    params(("file" = String, Path, description = "<sha256>.png")),
    responses(
        (status = 200, description = "image/png", content_type = "image/png"),
        (status = 304, description = "Not modified"),
        (status = 404, description = "NOT_FOUND", body = ErrorBody),
    ))]
pub async fn get(
    State(state): State<AppState>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Error> {
    let hash = file.strip_suffix(".png").unwrap_or_default();
    let not_found = error::no_such_logo;
    if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(not_found());
    }
    let etag = format!("\"{hash}\"");
    let cache = HeaderValue::from_static("public, max-age=31536000, immutable");
    let matched = headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let etag_value = HeaderValue::from_str(&etag).map_err(Error::internal)?;
    if matched {
        return Ok((
            StatusCode::NOT_MODIFIED,
            [(ETAG, etag_value), (CACHE_CONTROL, cache)],
        )
            .into_response());
    }
    let asset = logo::get(&state.platform.db, hash)
        .await?
        .ok_or_else(not_found)?;
    let ctype = HeaderValue::from_str(&asset.content_type).map_err(Error::internal)?;
    Ok((
        [
            (CONTENT_TYPE, ctype),
            (ETAG, etag_value),
            (CACHE_CONTROL, cache),
        ],
        Body::from(asset.bytes),
    )
        .into_response())
}
