//! The public push routes: POST and DELETE /register, GET /register/status.
//! The push token itself is the credential of the last two.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use keel_platform::http::Json;
use keel_platform::http::input::{self, Formats};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::domain::push::devices;
use crate::domain::push::registration::{Registration, RegistrationBody, missing};
use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::input::{AnyBody, Params, RawBody};
use crate::routes::failures::*;
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct Registered {
    success: bool,
    /// False when a known device was updated (and reactivated).
    created: bool,
    active: bool,
}

/// Register a device, or update (and reactivate) a known one.
#[utoipa::path(post, path = "/register", tag = "push", security(("app_check" = [])),
    request_body(description = "JSON. A urlencoded form or multipart form fields are read too, though a form cannot say `null` (an empty field is absent)", content(
        (RegistrationBody = "application/json"),
    )),
    responses(
        (status = 200, body = Registered),
        (status = 400, description = format!("{REST_MISSING_PARAM} or {REST_INVALID_PARAM}, naming the field"), body = ErrorBody),
        AppCheckFailed, PushOff,
    ))]
pub async fn register(
    State(state): State<AppState>,
    headers: HeaderMap,
    AnyBody(body): AnyBody<RegistrationBody>,
) -> Result<Json<Registered>, Error> {
    let settings = state.settings.get().await?;
    let token = headers
        .get(crate::routes::APPCHECK_HEADER)
        .and_then(|v| v.to_str().ok());
    let verified = state.appcheck.verify(token, &settings).await?;
    let reg = Registration::from(body);
    let created = state
        .registrations
        .submit(devices::NewRegistration {
            registration: reg,
            app_id: verified.app_id,
        })
        .await
        .map_err(Error::internal)?;
    Ok(Json(Registered {
        success: true,
        created,
        active: true,
    }))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TokenParam {
    /// The device's push token. It may come instead in the body (JSON, a
    /// urlencoded form or multipart form fields) as `push_token`; one of
    /// the two is required.
    #[param(value_type = String, required = true, min_length = 1)]
    push_token: Option<String>,
}

/// The push token from the query string, or else from the body (JSON or
/// form fields; a body that cannot be read holds no token).
async fn token_of(
    query: Option<String>,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<String, Error> {
    if let Some(t) = query.filter(|t| !t.is_empty()) {
        return Ok(t);
    }
    input::parse(headers, body, Formats::ANY)
        .await
        .ok()
        .and_then(|v| {
            v.get("push_token")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .filter(|t| !t.is_empty())
        .ok_or_else(|| missing("push_token").into())
}

#[derive(Serialize, ToSchema)]
pub struct Unregistered {
    success: bool,
    active: bool,
}

/// Mark a device inactive; the push token is the credential.
#[utoipa::path(delete, path = "/register", tag = "push",
    params(TokenParam),
    responses(
        (status = 200, body = Unregistered),
        (status = 400, description = format!("{REST_MISSING_PARAM}: no push token"), body = ErrorBody),
        (status = 404, description = format!("{DEVICE_NOT_FOUND} (or the module is off)"), body = ErrorBody),
    ))]
pub async fn unregister(
    State(state): State<AppState>,
    Params(q): Params<TokenParam>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<Json<Unregistered>, Error> {
    let token = token_of(q.push_token, &headers, body).await?;
    if !devices::deactivate(&state.db, &token, "unregistered").await? {
        return Err(error::no_such_device());
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
        (status = 400, description = format!("{REST_MISSING_PARAM}: no push token"), body = ErrorBody),
        PushOff,
    ))]
pub async fn registration_status(
    State(state): State<AppState>,
    Params(q): Params<TokenParam>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<Json<RegistrationStatus>, Error> {
    let token = token_of(q.push_token, &headers, body).await?;
    let (registered, active) = devices::status(&state.devices, token).await?;
    Ok(Json(RegistrationStatus { registered, active }))
}
