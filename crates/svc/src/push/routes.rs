//! Push routes. With the push module switched off every one answers 404.

use axum::Json;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use keel_platform::sea_orm::EntityTrait;
use keel_platform::time::millis;
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

use super::devices::{self, Registration, missing};
use super::send::{self, Progress, SendRequest, Target};
use super::stats::{self, Stats};
use super::transfer::{self, ImportReport, check_file, invalid_file_type};
use crate::auth::{Admin, Push};
use crate::csv_export;
use crate::entity::push_send;
use crate::error::{Error, ErrorBody};
use crate::routes::admin::Body;
use crate::state::AppState;

pub fn router(state: AppState) -> OpenApiRouter<AppState> {
    let import = OpenApiRouter::new()
        .routes(routes!(import_devices))
        .layer(DefaultBodyLimit::max(state.cfg.expo.import_limit));
    OpenApiRouter::new()
        .routes(routes!(register, unregister))
        .routes(routes!(registration_status))
        .routes(routes!(send_notification))
        .routes(routes!(get_send, cancel_send))
        .routes(routes!(push_stats))
        .routes(routes!(export_devices))
        .merge(import)
        .layer(middleware::from_fn_with_state(state, module_switch))
}

/// The push module switched off: every push route is 404.
async fn module_switch(State(state): State<AppState>, req: Request, next: Next) -> Response {
    match state.settings.get().await {
        Ok(s) if s.push_enabled => next.run(req).await,
        Ok(_) => Error::api(
            StatusCode::NOT_FOUND,
            "rest_no_route",
            "No route was found matching the URL and request method.",
        )
        .into_response(),
        Err(e) => e.into_response(),
    }
}

fn body_object(v: Value) -> Result<Map<String, Value>, Error> {
    match v {
        Value::Object(o) => Ok(o),
        _ => Err(Error::api(
            StatusCode::BAD_REQUEST,
            "rest_invalid_json",
            "The body must be a JSON object",
        )),
    }
}

/// Documents the body of POST /register.
#[allow(dead_code)]
#[derive(ToSchema)]
pub struct RegisterBody {
    /// `ExponentPushToken[...]` or `ExpoPushToken[...]`
    push_token: String,
    /// `ios` or `android`
    device_type: String,
    device_model: Option<String>,
    os_version: Option<String>,
    app_version: Option<String>,
    /// A locale tag, e.g. `en-US`.
    locale: Option<String>,
    /// An IANA zone, e.g. `Europe/Berlin`.
    timezone: Option<String>,
    user_label: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct Registered {
    success: bool,
    /// False when a known device was updated (and reactivated).
    created: bool,
    active: bool,
}

/// Register a device, or update (and reactivate) a known one.
#[utoipa::path(post, path = "/register", tag = "push",
    params(("X-Vendor-AppCheck" = String, Header, description = "App Check token")),
    request_body = RegisterBody,
    responses(
        (status = 200, body = Registered),
        (status = 400, description = "rest_missing_callback_param or rest_invalid_param, naming the field", body = ErrorBody),
        (status = 403, description = "appcheck_failed", body = ErrorBody),
        (status = 404, description = "push module off", body = ErrorBody),
    ))]
pub async fn register(
    State(state): State<AppState>,
    headers: HeaderMap,
    Body(body): Body<Value>,
) -> Result<Json<Registered>, Error> {
    let settings = state.settings.get().await?;
    let token = headers
        .get(crate::routes::public::APPCHECK_HEADER)
        .and_then(|v| v.to_str().ok());
    let verified = state.appcheck.verify(token, &settings).await?;
    let reg = Registration::parse(&body_object(body)?)?;
    let created = state
        .registrations
        .submit(devices::NewRegistration {
            registration: reg,
            app_id: verified.app_id,
        })
        .await
        .map_err(Error::Internal)?;
    Ok(Json(Registered {
        success: true,
        created,
        active: true,
    }))
}

#[derive(Deserialize, IntoParams, ToSchema)]
pub struct TokenParam {
    /// The device's push token (query string or JSON body).
    push_token: Option<String>,
}

/// The push token from the query string, or else from a JSON body.
fn token_of(query: Option<String>, body: &[u8]) -> Result<String, Error> {
    let from_body = || {
        serde_json::from_slice::<Value>(body).ok().and_then(|v| {
            v.get("push_token")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    };
    query
        .filter(|t| !t.is_empty())
        .or_else(from_body)
        .ok_or_else(|| missing("push_token"))
}

#[derive(Serialize, ToSchema)]
pub struct Unregistered {
    success: bool,
    active: bool,
}

/// Mark a device inactive; the push token is the credential.
#[utoipa::path(delete, path = "/register", tag = "push",
    params(TokenParam),
    request_body(content = TokenParam, description = "Or the token in the body"),
    responses(
        (status = 200, body = Unregistered),
        (status = 400, body = ErrorBody),
        (status = 404, description = "svc_push_device_not_found (or the module is off)", body = ErrorBody),
    ))]
pub async fn unregister(
    State(state): State<AppState>,
    Query(q): Query<TokenParam>,
    body: axum::body::Bytes,
) -> Result<Json<Unregistered>, Error> {
    let token = token_of(q.push_token, &body)?;
    if !devices::deactivate(&state.db, &token, "unregistered").await? {
        return Err(Error::api(
            StatusCode::NOT_FOUND,
            "svc_push_device_not_found",
            "This push token is not registered",
        ));
    }
    Ok(Json(Unregistered {
        success: true,
        active: false,
    }))
}

#[derive(Serialize, ToSchema)]
pub struct RegistrationStatus {
    registered: bool,
    active: bool,
}

/// Whether this push token is registered and active.
#[utoipa::path(get, path = "/register/status", tag = "push",
    params(TokenParam),
    responses(
        (status = 200, body = RegistrationStatus),
        (status = 400, body = ErrorBody),
        (status = 404, description = "push module off", body = ErrorBody),
    ))]
pub async fn registration_status(
    State(state): State<AppState>,
    Query(q): Query<TokenParam>,
    body: axum::body::Bytes,
) -> Result<Json<RegistrationStatus>, Error> {
    let token = token_of(q.push_token, &body)?;
    let (registered, active) = devices::status(&state.db, &token).await?;
    Ok(Json(RegistrationStatus { registered, active }))
}

/// Documents the body of POST /send.
#[allow(dead_code)]
#[derive(ToSchema)]
pub struct SendBody {
    title: String,
    body: String,
    #[schema(value_type = Option<Object>)]
    data: Option<Value>,
    /// Default: every active device.
    target: Option<Target>,
    /// ISO 8601; in the future: scheduled.
    send_at: Option<String>,
    /// `HH:MM` in each device's own time zone.
    local_time: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct SendView {
    id: String,
    /// `scheduled`, `queued`, `sending`, `sent` or `cancelled`.
    status: &'static str,
    recipients: i64,
    title: String,
    body: String,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    send_at: chrono::DateTime<Utc>,
    local_time: Option<String>,
    progress: Progress,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    created_at: chrono::DateTime<Utc>,
}

async fn view(state: &AppState, s: push_send::Model) -> Result<SendView, Error> {
    let progress = send::progress(&state.db, &s.id).await?;
    Ok(SendView {
        status: send::status_of(&s, &progress, Utc::now()),
        id: s.id,
        recipients: s.recipients,
        title: s.title,
        body: s.body,
        send_at: s.send_at,
        local_time: s.local_time,
        progress,
        created_at: s.created_at,
    })
}

#[derive(Serialize, ToSchema)]
pub struct SendAccepted {
    id: String,
    status: &'static str,
    recipients: i64,
}

/// Send or schedule a notification.
#[utoipa::path(post, path = "/send", tag = "push", security(("app_password" = [])),
    request_body = SendBody,
    responses(
        (status = 202, body = SendAccepted),
        (status = 400, body = ErrorBody),
        (status = 403, description = "svc_push_forbidden", body = ErrorBody),
        (status = 404, description = "push module off", body = ErrorBody),
    ))]
pub async fn send_notification(
    State(state): State<AppState>,
    admin: Admin<Push>,
    Body(body): Body<Value>,
) -> Result<(StatusCode, Json<SendAccepted>), Error> {
    let req = SendRequest::parse(&body_object(body)?)?;
    let s = send::create(&state.db, req, admin.user.id).await?;
    let v = view(&state, s).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(SendAccepted {
            id: v.id,
            status: v.status,
            recipients: v.recipients,
        }),
    ))
}

/// A send's progress.
#[utoipa::path(get, path = "/send/{id}", tag = "push", security(("app_password" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, body = SendView),
        (status = 403, body = ErrorBody),
        (status = 404, description = "svc_push_send_not_found", body = ErrorBody),
    ))]
pub async fn get_send(
    State(state): State<AppState>,
    _admin: Admin<Push>,
    Path(id): Path<String>,
) -> Result<Json<SendView>, Error> {
    let s = push_send::Entity::find_by_id(id.as_str())
        .one(state.db.read())
        .await?
        .ok_or_else(send::not_found)?;
    Ok(Json(view(&state, s).await?))
}

#[derive(Serialize, ToSchema)]
pub struct Cancelled {
    id: String,
    status: &'static str,
    /// Messages that will not be sent.
    cancelled: u64,
}

/// Cancel what has not been handed to Expo yet.
#[utoipa::path(delete, path = "/send/{id}", tag = "push", security(("app_password" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, body = Cancelled),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "svc_push_not_cancellable", body = ErrorBody),
    ))]
pub async fn cancel_send(
    State(state): State<AppState>,
    _admin: Admin<Push>,
    Path(id): Path<String>,
) -> Result<Json<Cancelled>, Error> {
    let cancelled = send::cancel(&state.db, &id).await?;
    Ok(Json(Cancelled {
        id,
        status: "cancelled",
        cancelled,
    }))
}

/// Device and delivery counts.
#[utoipa::path(get, path = "/stats", tag = "push", security(("app_password" = [])),
    responses((status = 200, body = Stats), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn push_stats(
    State(state): State<AppState>,
    _admin: Admin<Push>,
) -> Result<Json<Stats>, Error> {
    Ok(Json(stats::collect(&state.db).await?))
}

/// Every device as CSV, streamed.
#[utoipa::path(get, path = "/devices/export", tag = "push", security(("app_password" = [])),
    responses(
        (status = 200, description = "text/csv with a header row", content_type = "text/csv"),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn export_devices(State(state): State<AppState>, _admin: Admin<Push>) -> Response {
    csv_export::download("push-devices.csv", transfer::export(state.db.clone()))
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
#[utoipa::path(post, path = "/devices/import", tag = "push", security(("app_password" = [])),
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
