//! GET /stats, GET /devices/export, POST /devices/import.

use std::time::Instant;

use axum::extract::multipart::MultipartError;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::header::CONTENT_LENGTH;
use axum::response::Response;
use keel_platform::audit::Entry;
use keel_platform::http::{Json, PlatformError};
use serde_json::json;
use utoipa::ToSchema;

use super::download;
use crate::auth::{Admin, Push};
use crate::domain::push::import::{
    self, ImportLimits, ImportReport, check_file, invalid_file_type,
};
use crate::domain::push::stats::{self, Stats};
use crate::domain::push::transfer;
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

/// The multipart body of POST /devices/import (for the OpenAPI document;
/// the upload is read as it arrives).
#[derive(ToSchema)]
#[expect(dead_code, reason = "describes the body in the OpenAPI document")]
pub struct ImportForm {
    /// A .csv file (text/csv) with at least push_token and device_type columns.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// Import devices from CSV (multipart field `file`), upserted by push token,
/// read as it arrives: at most `KEEL_SVC_IMPORT_MAX_ROWS` rows, and only
/// while the request has time; the report says where an import that
/// stopped early stopped. The first 100 refused lines are listed with
/// their reasons, the rest counted.
#[utoipa::path(post, path = "/devices/import", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    request_body(content = ImportForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, body = ImportReport),
        (status = 400, description = format!("{INVALID_FILE_TYPE}, or no file"), body = ErrorBody),
        NotPushAdmin, (status = 413, body = ErrorBody),
    ))]
pub async fn import_devices(
    State(state): State<AppState>,
    admin: Admin<Push>,
    req: Request,
) -> Result<Json<ImportReport>, Error> {
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > state.cfg.expo.import_limit) {
        return Err(PlatformError::PayloadTooLarge.into());
    }
    let mut form = Multipart::from_request(req, &state).await.map_err(|_| {
        invalid_file_type("send a multipart/form-data upload with the file in the field named file")
    })?;
    let bad_form =
        |e: MultipartError| Error::from(PlatformError::from_rejection(e.status(), e.body_text()));
    while let Some(field) = form.next_field().await.map_err(bad_form)? {
        if field.name() != Some("file") {
            continue;
        }
        check_file(field.file_name(), field.content_type())?;
        let limits = ImportLimits {
            max_rows: state.cfg.expo.import_max_rows,
            deadline: Instant::now() + import_time(&state),
        };
        let report = import::import(&state.db, Box::pin(field), limits).await?;
        let entry = Entry::new(crate::NAME, "svc_devices_imported").detail(json!({
            "imported": report.imported, "updated": report.updated, "skipped": report.skipped,
            "refused": report.refused(), "complete": report.complete,
            "stopped_at_line": report.stopped_at_line,
        }));
        admin.record(&state, entry).await;
        return Ok(Json(report));
    }
    Err(invalid_file_type("no file was sent in the field named file").into())
}

/// How long an import may read: the request's time, less five seconds to
/// write the last batch and answer (at least a second).
fn import_time(state: &AppState) -> std::time::Duration {
    let limit = state.platform.config.http.request_timeout;
    limit
        .saturating_sub(std::time::Duration::from_secs(5))
        .max(std::time::Duration::from_secs(1))
}
