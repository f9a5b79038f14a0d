//! GET /stats, GET /devices/export, POST /devices/import.

use axum::extract::{FromRequest, Multipart, Request, State};
use axum::response::Response;
use keel_platform::http::Json;
use utoipa::ToSchema;

use super::download;
use crate::auth::{Admin, Push};
use crate::domain::push::stats::{self, Stats};
use crate::domain::push::transfer::{self, ImportReport, check_file, invalid_file_type};
use crate::error::code::*;
use crate::error::{Error, ErrorBody};
use crate::routes::failures::*;
use crate::state::AppState;

/// Device and delivery counts.
#[utoipa::path(get, path = "/stats", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    responses((status = 200, body = Stats), NotPushAdmin))]
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
        NotPushAdmin,
    ))]
pub async fn export_devices(State(state): State<AppState>, _admin: Admin<Push>) -> Response {
    download("push-devices.csv", transfer::export(state.db.clone()))
}

/// The multipart body of POST /devices/import, as it is read.
#[derive(ToSchema)]
pub struct ImportForm {
    /// A .csv file (text/csv) with at least push_token and device_type columns.
    #[schema(value_type = String, format = Binary)]
    file: axum::body::Bytes,
    #[schema(ignore)]
    file_name: Option<String>,
    #[schema(ignore)]
    content_type: Option<String>,
}

impl ImportForm {
    /// Reads the first field named `file`, with its name and type.
    async fn read(req: Request, state: &AppState) -> Result<Self, Error> {
        let mut form = Multipart::from_request(req, state).await.map_err(|_| {
            invalid_file_type(
                "send a multipart/form-data upload with the file in the field named file",
            )
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
            let file_name = field.file_name().map(str::to_owned);
            let content_type = field.content_type().map(str::to_owned);
            let file = field.bytes().await.map_err(bad_form)?;
            return Ok(Self {
                file,
                file_name,
                content_type,
            });
        }
        Err(invalid_file_type("no file was sent in the field named file").into())
    }
}

/// Import devices from CSV (multipart field `file`), upserted by push token.
#[utoipa::path(post, path = "/devices/import", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    request_body(content = ImportForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, body = ImportReport),
        (status = 400, description = format!("{INVALID_FILE_TYPE}, or no file"), body = ErrorBody),
        NotPushAdmin, (status = 413, body = ErrorBody),
    ))]
pub async fn import_devices(
    State(state): State<AppState>,
    _admin: Admin<Push>,
    req: Request,
) -> Result<Json<ImportReport>, Error> {
    let form = ImportForm::read(req, &state).await?;
    check_file(
        form.file_name.as_deref(),
        form.content_type.as_deref(),
        &form.file,
    )?;
    Ok(Json(transfer::import(&state.db, &form.file).await?))
}
