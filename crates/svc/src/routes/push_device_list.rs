//! GET /devices: the devices, searched and paged on the server.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use keel_platform::time::millis;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::{Admin, Push};
use crate::domain::push::search;
use crate::entity::push_device;
use crate::error::Error;
use crate::routes::failures::*;
use crate::routes::paging::{Paging, paged, query, text_filter};
use crate::state::AppState;

/// The longest search text.
const SEARCH_MAX: usize = 200;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Search {
    /// Devices whose push token or label contains this text, ignoring
    /// case (at most 200 characters; empty or absent: every device).
    #[param(max_length = 200)]
    search: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct DeviceView {
    push_token: String,
    /// `ios` or `android`.
    device_type: String,
    device_model: Option<String>,
    os_version: Option<String>,
    app_version: Option<String>,
    locale: Option<String>,
    timezone: Option<String>,
    user_label: Option<String>,
    active: bool,
    /// `unregistered` or `DeviceNotRegistered`, when inactive.
    inactive_reason: Option<String>,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    registered_at: DateTime<Utc>,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    updated_at: DateTime<Utc>,
}

impl From<push_device::Model> for DeviceView {
    fn from(d: push_device::Model) -> Self {
        Self {
            push_token: d.push_token,
            device_type: d.device_type,
            device_model: d.device_model,
            os_version: d.os_version,
            app_version: d.app_version,
            locale: d.locale,
            timezone: d.timezone,
            user_label: d.user_label,
            active: d.active,
            inactive_reason: d.inactive_reason,
            registered_at: d.registered_at,
            updated_at: d.updated_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct DevicePage {
    devices: Vec<DeviceView>,
    total: u64,
    total_pages: u64,
    page: u64,
    per_page: u64,
}

/// The devices (every one, or those a search matches) in push token
/// order, a page at a time (`X-WP-Total`, `X-WP-TotalPages`).
#[utoipa::path(get, path = "/devices", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(Search, Paging),
    responses(
        (status = 200, body = DevicePage, headers(
            ("X-WP-Total" = u64, description = "How many devices match"),
            ("X-WP-TotalPages" = u64, description = "How many pages of `per_page`"),
        )),
        BadPage,
        NotPushAdmin,
    ))]
pub async fn list_devices(
    State(state): State<AppState>,
    _admin: Admin<Push>,
    q: Result<Query<Paging>, QueryRejection>,
    s: Result<Query<Search>, QueryRejection>,
) -> Result<Response, Error> {
    let (page, per_page) = query(q)?.get()?;
    let Search { search } = query(s)?;
    let search = text_filter("search", search.as_deref(), SEARCH_MAX)?;
    let (rows, total) = search::page(&state.db, search, page, per_page).await?;
    let body = DevicePage {
        devices: rows.into_iter().map(Into::into).collect(),
        total,
        total_pages: total.div_ceil(per_page),
        page,
        per_page,
    };
    Ok(paged(body, total, per_page))
}
