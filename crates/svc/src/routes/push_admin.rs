//! GET /stats, GET /devices/export, POST /devices/import.

use axum::extract::{FromRequest, Multipart, Request, State};
use axum::response::Response;
use keel_platform::http::Json;
use utoipa::ToSchema;

use super::download;
use crate::auth::{Admin, Push};
use crate::domain::push::stats::{self, Stats};
use crate::domain::push::transfer::{self, ImportReport, check_file, invalid_file_type};
use crate::error::{Error, ErrorBody};
use crate::state::AppState;

/// Device and delivery counts.
#[utoipa::path(get, path = "/stats", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    responses((status = 200, body = Stats), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn push_stats(
    State(state): State<AppState>,
    _admin: Admin<Push>,
) -> Result<Json<Stats>, Error> {
    Ok(Json(stats::collect(&state.db).await?))
}

/// Every device as CSV, streamed.
#[utoipa::path(get, path = "/devices/export", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    responses(
        (status = 200, description = "text/csv with a header row", content_type = "text/csv"),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn export_devices(State(state): State<AppState>, _admin: Admin<Push>) -> Response {
    download("push-devices.csv", transfer::export(state.db.clone()))
}

/// Documents the multipart body of POST /devices/import.
#[allow(dead_code)]
#[derive(ToSchema)]
pub struct ImportForm {
    /// A .csv file (text/csv) with at least push_token and device_type columns.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// Import devices from CSV (multipart field `file`), upserted by push token.
#[utoipa::path(post, path = "/devices/import", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    request_body(content = ImportForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, body = ImportReport),
        (status = 400, description = "invalid_file_type, or no file", body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 413, body = ErrorBody),
    ))]
pub async fn import_devices(
    State(state): State<AppState>,
    _admin: Admin<Push>,
    req: Request,
) -> Result<Json<ImportReport>, Error> {
    let mut form = Multipart::from_request(req, &state).await.map_err(|_| {
        invalid_file_type("send a multipart/form-data upload with the file in the field named file")
    })?;
    let bad_form = |e: axum::extract::multipart::MultipartError| {
        Error::from(keel_platform::http::PlatformError::from_rejection(
            e.status(),
            e.body_text(),
        ))
    };
    while let Some(field) = form.next_field().await.map_err(bad_form)? {
        if field.name() != Some("file") {
            continue;
        }
        let filename = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(str::to_owned);
        let bytes = field.bytes().await.map_err(bad_form)?;
        check_file(filename.as_deref(), content_type.as_deref(), &bytes)?;
        return Ok(Json(transfer::import(&state.db, &bytes).await?));
    }
    Err(invalid_file_type(
        "no file was sent in the field named file",
    ))
}
