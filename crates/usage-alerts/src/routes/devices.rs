//! POST and DELETE /register, DELETE /device/{token}, GET /device.

use axum::extract::{Path, State};
use keel_platform::http::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::domain::devices::{self, Device, Registration, Unregistration};
use crate::domain::values::DeviceToken;
use crate::error::{self, Error};
use crate::input::Body;
use crate::routes::failures::*;
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct Registered {
    success: bool,
    message: String,
}

/// Register (or update) a device for pushes.
#[utoipa::path(post, path = "/register", tag = "usage-alerts", security(("identity" = [])),
    request_body = Registration,
    responses(
        (status = 200, body = Registered),
        InvalidField,
    ))]
pub async fn register(
    State(state): State<AppState>,
    me: Caller,
    Body(r): Body<Registration>,
) -> Result<Json<Registered>, Error> {
    devices::register(&state.db, &me.user_id, r).await?;
    Ok(Json(Registered {
        success: true,
        message: "Device registered".to_owned(),
    }))
}

#[derive(Serialize, ToSchema)]
pub struct Message {
    message: String,
}

/// Remove a device (body `deviceToken`, camelCase).
#[utoipa::path(delete, path = "/register", tag = "usage-alerts", security(("identity" = [])),
    request_body = Unregistration,
    responses(
        (status = 200, body = Message),
        InvalidField,
        NoSuchDevice,
    ))]
pub async fn unregister(
    State(state): State<AppState>,
    me: Caller,
    Body(u): Body<Unregistration>,
) -> Result<Json<Message>, Error> {
    let token = DeviceToken::parse(u.device_token.as_str());
    let Some(token) = token else {
        return Err(error::no_such_device());
    };
    if !devices::remove(&state.db, &me.user_id, &token).await? {
        return Err(error::no_such_device());
    }
    Ok(Json(Message {
        message: "Device unregistered".to_owned(),
    }))
}

#[derive(Serialize, ToSchema)]
pub struct Success {
    success: bool,
}

/// Remove a device by its token.
#[utoipa::path(delete, path = "/device/{token}", tag = "usage-alerts", security(("identity" = [])),
    params(("token" = String, Path, description = "Device token")),
    responses(
        (status = 200, body = Success),
        NoSuchDevice,
    ))]
pub async fn remove(
    State(state): State<AppState>,
    me: Caller,
    Path(token): Path<String>,
) -> Result<Json<Success>, Error> {
    // A token of the wrong shape names no device keel could hold.
    let Some(token) = DeviceToken::parse(&token) else {
        return Err(error::no_such_device());
    };
    if !devices::remove(&state.db, &me.user_id, &token).await? {
        return Err(error::no_such_device());
    }
    Ok(Json(Success { success: true }))
}

#[derive(Serialize, ToSchema)]
pub struct Devices {
    devices: Vec<Device>,
}

/// The caller's devices.
#[utoipa::path(get, path = "/device", tag = "usage-alerts", security(("identity" = [])),
    responses((status = 200, body = Devices)))]
pub async fn list(State(state): State<AppState>, me: Caller) -> Result<Json<Devices>, Error> {
    Ok(Json(Devices {
        devices: devices::list(&state.db, &me.user_id).await?,
    }))
}
