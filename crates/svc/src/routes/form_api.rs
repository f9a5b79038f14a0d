//! The form API (no user login; App Check plus the forms allow-list).

use std::net::{IpAddr, SocketAddr};

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Path, State};
use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use keel_platform::http::Json;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use keel_platform::http::input::{self, Formats};

use super::cors;
use crate::domain::forms::{FieldDef, FormDef, Values, check_submission};
use crate::domain::hooks::{self, AppCheckVerified};
use crate::domain::ids::FormId;
use crate::domain::settings::Settings;
use crate::domain::site;
use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::routes::failures::*;
use crate::state::AppState;

pub const APPCHECK_HEADER: &str = "x-vendor-appcheck";

fn header_token(headers: &HeaderMap) -> Option<&str> {
    headers.get(APPCHECK_HEADER).and_then(|v| v.to_str().ok())
}

/// An allow-listed form that exists.
async fn served_form(
    state: &AppState,
    settings: &Settings,
    form_id: &str,
) -> Result<FormDef, Error> {
    if !settings.forms_allowlist.iter().any(|f| f == form_id) {
        return Err(error::no_such_form());
    }
    state
        .forms
        .get(form_id)
        .await?
        .ok_or_else(error::no_such_form)
}

/// The verified token's event (not yet recorded), or 403.
async fn verify(
    state: &AppState,
    settings: &Settings,
    token: Option<&str>,
    form_id: &str,
) -> Result<AppCheckVerified, Error> {
    let v = state.appcheck.verify(token, settings).await?;
    Ok(AppCheckVerified {
        app_id: v.app_id,
        form_id: form_id.to_owned(),
        token: token.unwrap_or_default().trim().to_owned(),
    })
}

/// Records a verified token's event on its own (no submission to store it
/// with) and delivers it.
async fn record(state: &AppState, event: AppCheckVerified) -> Result<(), Error> {
    hooks::appcheck_verified(&state.audit, event)
        .await
        .map_err(Error::internal)
}

#[derive(Serialize, ToSchema)]
pub struct FieldsResponse {
    id: String,
    title: String,
    fields: Vec<FieldDef>,
}

/// The field list of an allow-listed form.
#[utoipa::path(get, path = "/forms/{form_id}/fields", tag = "forms", security(("app_check" = [])),
    params(
        ("form_id" = String, Path, description = r"Matches ^\d+(?::(?:\d+|[a-f0-9-]{36}))?$"),
    ),
    responses(
        (status = 200, description = "Sent with Cache-Control: private, no-store", body = FieldsResponse),
        AppCheckFailed, NoSuchForm,
    ))]
pub async fn fields(
    State(state): State<AppState>,
    Path(form_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Error> {
    let form_id = FormId::parse(&form_id).ok_or_else(error::no_route)?;
    let settings = state.settings.get().await?;
    let event = verify(&state, &settings, header_token(&headers), form_id.as_str()).await?;
    record(&state, event).await?;
    let def = served_form(&state, &settings, form_id.as_str()).await?;
    let mut resp = Json(FieldsResponse {
        id: def.id,
        title: def.title,
        fields: def.fields,
    })
    .into_response();
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    Ok(resp)
}

#[derive(Serialize, ToSchema)]
pub struct Submitted {
    success: bool,
    /// The stored submission's id.
    id: i64,
}

/// The body of POST /submit/{form_id}, as it is read: a member of another
/// type counts as absent.
#[derive(Default, serde::Deserialize, ToSchema)]
pub struct SubmitBody {
    /// Field id → scalar value; at least one.
    #[schema(schema_with = fields_schema, required = true)]
    fields: Option<Value>,
    /// Legacy alternative to the X-Vendor-AppCheck header.
    #[schema(value_type = Option<String>)]
    app_check_token: Option<Value>,
}

fn fields_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(AdditionalProperties::FreeForm(true)))
        .min_properties(Some(1))
        .build()
}

/// Submit values to an allow-listed form.
#[utoipa::path(post, path = "/submit/{form_id}", tag = "forms", security(("app_check" = [])),
    params(
        ("form_id" = String, Path, description = r"Matches ^\d+(?::(?:\d+|[a-f0-9-]{36}))?$"),
    ),
    request_body(description = "JSON, or a form with bracketed keys (fields[name]=Ada)", content(
        (SubmitBody = "application/json"),
        (SubmitBody = "application/x-www-form-urlencoded"),
        (SubmitBody = "multipart/form-data"),
    )),
    responses(
        (status = 200, description = "Accepted and stored", body = Submitted),
        (status = 400, description = format!("{MISSING_FIELDS}, {INVALID_FIELDS} (ids in data.fields) or {INVALID_EMAIL}"), body = ErrorBody),
        AppCheckFailed, NoSuchForm,
        (status = 413, description = format!("{INVALID_FIELDS}: over the payload limit"), body = ErrorBody),
        (status = 429, description = RATE_LIMITED, body = ErrorBody),
    ))]
pub async fn submit(
    State(state): State<AppState>,
    Path(form_id): Path<String>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Submitted>, Error> {
    let form_id = FormId::parse(&form_id).ok_or_else(error::no_route)?;
    // Read what may be read; judge the size only in its turn.
    let bytes = axum::body::to_bytes(body, state.cfg.submit_hard_limit)
        .await
        .ok();
    let parsed: SubmitBody = match &bytes {
        Some(b) => input::parse(&headers, b.clone(), Formats::ANY)
            .await
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default(),
        None => SubmitBody::default(),
    };
    let token =
        header_token(&headers).or_else(|| parsed.app_check_token.as_ref().and_then(Value::as_str));
    // One snapshot of the settings for the whole request.
    let settings = state.settings.get().await?;
    let event = verify(&state, &settings, token, form_id.as_str()).await?;
    let ip = keel_platform::http::client_ip(
        peer.ip(),
        &headers,
        &state.platform.config.http.trusted_proxies,
    );
    let size = bytes.as_ref().map(Bytes::len);
    let fields = parsed.fields.as_ref();
    let values = match accepted(&state, &settings, &event, ip, size, fields).await {
        Ok(values) => values,
        Err(refused) => {
            // The token verified all the same: its event is recorded alone.
            record(&state, event).await?;
            return Err(refused);
        }
    };
    // The event is recorded with the submission, in its transaction.
    let delivered = hooks::subscribed().then(|| event.clone());
    let id = state
        .submissions
        .submit(site::NewSubmission {
            values,
            verified: event,
        })
        .await
        .map_err(Error::internal)?;
    if let Some(event) = delivered {
        hooks::deliver(event);
    }
    Ok(Json(Submitted { success: true, id }))
}

/// The values to store for a verified submission of `size` bytes (none:
/// over the hard limit) from `ip`, or why it is refused: no such form, the
/// rate limit, the payload limit, invalid fields.
async fn accepted(
    state: &AppState,
    settings: &Settings,
    event: &AppCheckVerified,
    ip: IpAddr,
    size: Option<usize>,
    fields: Option<&Value>,
) -> Result<Values, Error> {
    let def = served_form(state, settings, &event.form_id).await?;
    let decision = state
        .platform
        .cache
        .hit(
            &format!("svc:submit:{}", event.app_id),
            &ip.to_string(),
            u64::from(settings.submission_rate_limit),
            std::time::Duration::from_secs(60),
        )
        .await;
    if !decision.allowed {
        return Err(error::too_many_submissions(decision.retry_after.as_secs()));
    }
    let too_big =
        size.is_none_or(|n| u64::try_from(n).unwrap_or(u64::MAX) > settings.payload_limit_bytes);
    if too_big {
        return Err(error::submission_too_large(settings.payload_limit_bytes));
    }
    Ok(check_submission(&def, fields)?)
}

async fn preflight(state: &AppState, headers: &HeaderMap, methods: &'static str) -> Response {
    let mut resp = StatusCode::NO_CONTENT.into_response();
    if cors::allowed_origin(state, headers).await.is_some() {
        cors::preflight(resp.headers_mut(), methods);
    }
    resp
}

/// CORS preflight.
#[utoipa::path(options, path = "/forms/{form_id}/fields", tag = "forms",
    params(("form_id" = String, Path)),
    responses((status = 204, description = "Preflight; CORS headers only for an allowed origin")))]
pub async fn fields_preflight(State(state): State<AppState>, headers: HeaderMap) -> Response {
    preflight(&state, &headers, "GET, OPTIONS").await
}

/// CORS preflight.
#[utoipa::path(options, path = "/submit/{form_id}", tag = "forms",
    params(("form_id" = String, Path)),
    responses((status = 204, description = "Preflight; CORS headers only for an allowed origin")))]
pub async fn submit_preflight(State(state): State<AppState>, headers: HeaderMap) -> Response {
    preflight(&state, &headers, "POST, OPTIONS").await
}
