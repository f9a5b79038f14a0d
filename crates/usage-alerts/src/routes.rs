//! The usage-alerts route table and handlers.

use axum::Json;
use axum::extract::{Path, Query, State};
use chrono::Utc;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set};
use keel_platform::time::millis;
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use serde::{Deserialize, Serialize};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoParams, Modify, OpenApi, ToSchema};

use crate::auth::Caller;
use crate::entity::{alert, daily_total, day_session, delivery, device, event, preferences};
use crate::error::{Error, ErrorBody};
use crate::ingest::NewEvent;
use crate::input::{self, JsonObject};
use crate::state::AppState;
use crate::thresholds::{self, ThresholdConfig};

#[derive(OpenApi)]
#[openapi(modifiers(&BearerAuth), tags((name = "usage-alerts", description = "Usage events, thresholds, devices")))]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "identity",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .build(),
            ),
        );
    }
}

pub fn router(state: AppState) -> OpenApiRouter {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(status))
        .routes(routes!(register, unregister))
        .routes(routes!(remove_device))
        .routes(routes!(list_devices))
        .routes(routes!(post_event))
        .routes(routes!(get_preferences, set_preferences))
        .routes(routes!(history))
        .routes(routes!(delete_account))
        .with_state(state)
}

#[derive(Serialize, ToSchema)]
pub struct Status {
    status: &'static str,
    /// keel's semantic version.
    version: &'static str,
    /// `development` or `production`.
    environment: &'static str,
}

/// Service status (no authentication).
#[utoipa::path(get, path = "/status", tag = "usage-alerts", responses((status = 200, body = Status)))]
pub async fn status(State(state): State<AppState>) -> Json<Status> {
    Json(Status {
        status: "ok",
        version: env!("CARGO_PKG_VERSION"),
        environment: state.environment.as_str(),
    })
}

const MAX_TOKEN: usize = 200;

/// APNs device tokens: hex, 64 to 200 characters.
fn device_token(raw: &str, field: &str) -> Result<String, Error> {
    let ok = (64..=MAX_TOKEN).contains(&raw.len())
        && raw.len().is_multiple_of(2)
        && raw.bytes().all(|b| b.is_ascii_hexdigit());
    if ok {
        Ok(raw.to_ascii_lowercase())
    } else {
        Err(input::invalid(
            field,
            "must be an APNs device token (64 to 200 hexadecimal characters)",
        ))
    }
}

/// Documents the body; handlers check its fields one by one (input.rs).
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
pub struct RegisterBody {
    device_token: String,
    /// `ios` or `watchos`
    platform: String,
    /// Use the APNs sandbox (development builds).
    sandbox: Option<bool>,
}

#[derive(Serialize, ToSchema)]
pub struct Registered {
    success: bool,
    message: String,
}

/// Register (or update) a device for pushes.
#[utoipa::path(post, path = "/register", tag = "usage-alerts", security(("identity" = [])),
    request_body = RegisterBody,
    responses(
        (status = 200, body = Registered),
        (status = 400, description = "Missing or invalid field", body = ErrorBody),
        (status = 401, body = ErrorBody),
    ))]
pub async fn register(
    State(state): State<AppState>,
    me: Caller,
    JsonObject(body): JsonObject,
) -> Result<Json<Registered>, Error> {
    let token = device_token(
        &input::string(&body, "device_token", MAX_TOKEN * 2)?,
        "device_token",
    )?;
    let platform = input::string(&body, "platform", 16)?;
    if platform != "ios" && platform != "watchos" {
        return Err(input::invalid("platform", "must be ios or watchos"));
    }
    let sandbox = input::optional_bool(&body, "sandbox")?.unwrap_or(false);
    let row = device::ActiveModel {
        device_token: Set(token),
        user_id: Set(me.user_id),
        platform: Set(platform),
        sandbox: Set(sandbox),
        registered_at: Set(Utc::now()),
    };
    device::Entity::insert(row)
        .on_conflict(
            OnConflict::column(device::Column::DeviceToken)
                .update_columns([
                    device::Column::UserId,
                    device::Column::Platform,
                    device::Column::Sandbox,
                    device::Column::RegisteredAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(state.db.write())
        .await?;
    Ok(Json(Registered {
        success: true,
        message: "Device registered".to_owned(),
    }))
}

/// Documents the body; handlers check its fields one by one (input.rs).
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnregisterBody {
    device_token: String,
}

#[derive(Serialize, ToSchema)]
pub struct Message {
    message: String,
}

/// Remove a device (body `deviceToken`, camelCase).
#[utoipa::path(delete, path = "/register", tag = "usage-alerts", security(("identity" = [])),
    request_body = UnregisterBody,
    responses(
        (status = 200, body = Message),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, description = "No such device of this user", body = ErrorBody),
    ))]
pub async fn unregister(
    State(state): State<AppState>,
    me: Caller,
    JsonObject(body): JsonObject,
) -> Result<Json<Message>, Error> {
    let raw = input::string(&body, "deviceToken", MAX_TOKEN * 2)?;
    remove(&state, &me, &raw).await?;
    Ok(Json(Message {
        message: "Device unregistered".to_owned(),
    }))
}

async fn remove(state: &AppState, me: &Caller, raw: &str) -> Result<(), Error> {
    let token = raw.to_ascii_lowercase();
    let res = device::Entity::delete_many()
        .filter(device::Column::DeviceToken.eq(token))
        .filter(device::Column::UserId.eq(me.user_id.as_str()))
        .exec(state.db.write())
        .await?;
    if res.rows_affected == 0 {
        return Err(Error::api(
            axum::http::StatusCode::NOT_FOUND,
            "Device not found",
        ));
    }
    Ok(())
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
        (status = 401, body = ErrorBody),
        (status = 404, description = "No such device of this user", body = ErrorBody),
    ))]
pub async fn remove_device(
    State(state): State<AppState>,
    me: Caller,
    Path(token): Path<String>,
) -> Result<Json<Success>, Error> {
    remove(&state, &me, &token).await?;
    Ok(Json(Success { success: true }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceView {
    device_token: String,
    platform: String,
    user_id: String,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    registered_at: chrono::DateTime<Utc>,
    sandbox: bool,
}

#[derive(Serialize, ToSchema)]
pub struct Devices {
    devices: Vec<DeviceView>,
}

/// The caller's devices.
#[utoipa::path(get, path = "/device", tag = "usage-alerts", security(("identity" = [])),
    responses((status = 200, body = Devices), (status = 401, body = ErrorBody)))]
pub async fn list_devices(
    State(state): State<AppState>,
    me: Caller,
) -> Result<Json<Devices>, Error> {
    let rows = device::Entity::find()
        .filter(device::Column::UserId.eq(me.user_id.as_str()))
        .order_by_asc(device::Column::RegisteredAt)
        .all(state.db.read())
        .await?;
    Ok(Json(Devices {
        devices: rows
            .into_iter()
            .map(|d| DeviceView {
                device_token: d.device_token,
                platform: d.platform,
                user_id: d.user_id,
                registered_at: d.registered_at,
                sandbox: d.sandbox,
            })
            .collect(),
    }))
}

/// Documents the body; handlers check its fields one by one (input.rs).
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageEventPayload {
    session_id: String,
    /// ISO 8601
    timestamp: String,
    model: String,
    input_tokens: u64,
    output_tokens: u64,
    cache_read_tokens: u64,
    cache_write_tokens: u64,
    #[serde(rename = "costUSD")]
    cost_usd: f64,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The user's cost for the current UTC day, this event included.
    total_cost: f64,
}

#[derive(Serialize, ToSchema)]
pub struct EventAccepted {
    success: bool,
    summary: Summary,
}

/// Store a usage event, update the day's totals and alert on crossed thresholds.
#[utoipa::path(post, path = "/event", tag = "usage-alerts", security(("identity" = [])),
    request_body = UsageEventPayload,
    responses(
        (status = 200, body = EventAccepted),
        (status = 400, description = "Missing or invalid field", body = ErrorBody),
        (status = 401, body = ErrorBody),
    ))]
pub async fn post_event(
    State(state): State<AppState>,
    me: Caller,
    JsonObject(body): JsonObject,
) -> Result<Json<EventAccepted>, Error> {
    let event = NewEvent {
        session_id: input::string(&body, "sessionId", 255)?,
        timestamp: input::timestamp(&body, "timestamp")?,
        model: input::string(&body, "model", 255)?,
        input_tokens: input::count(&body, "inputTokens")?,
        output_tokens: input::count(&body, "outputTokens")?,
        cache_read_tokens: input::count(&body, "cacheReadTokens")?,
        cache_write_tokens: input::count(&body, "cacheWriteTokens")?,
        cost_usd: input::amount(&body, "costUSD")?,
        user_id: me.user_id,
    };
    let total_cost = state.ingestor.submit(event).await?;
    Ok(Json(EventAccepted {
        success: true,
        summary: Summary { total_cost },
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserPreferences {
    user_id: String,
    thresholds: Vec<ThresholdConfig>,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    updated_at: chrono::DateTime<Utc>,
}

#[derive(Serialize, ToSchema)]
pub struct PreferencesResponse {
    /// `null` when none were configured.
    preferences: Option<UserPreferences>,
}

fn view(p: preferences::Model) -> UserPreferences {
    UserPreferences {
        thresholds: serde_json::from_str(&p.thresholds).unwrap_or_default(),
        user_id: p.user_id,
        updated_at: p.updated_at,
    }
}

/// The caller's thresholds.
#[utoipa::path(get, path = "/preferences", tag = "usage-alerts", security(("identity" = [])),
    responses((status = 200, body = PreferencesResponse), (status = 401, body = ErrorBody)))]
pub async fn get_preferences(
    State(state): State<AppState>,
    me: Caller,
) -> Result<Json<PreferencesResponse>, Error> {
    let p = preferences::Entity::find_by_id(me.user_id.as_str())
        .one(state.db.read())
        .await?;
    Ok(Json(PreferencesResponse {
        preferences: p.map(view),
    }))
}

/// Documents the body; handlers check its fields one by one (input.rs).
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
pub struct PreferencesBody {
    thresholds: Vec<ThresholdConfig>,
}

#[derive(Serialize, ToSchema)]
pub struct PreferencesSaved {
    success: bool,
    preferences: UserPreferences,
}

/// Replace the caller's thresholds.
#[utoipa::path(post, path = "/preferences", tag = "usage-alerts", security(("identity" = [])),
    request_body = PreferencesBody,
    responses(
        (status = 200, body = PreferencesSaved),
        (status = 400, description = "Missing or invalid field", body = ErrorBody),
        (status = 401, body = ErrorBody),
    ))]
pub async fn set_preferences(
    State(state): State<AppState>,
    me: Caller,
    JsonObject(body): JsonObject,
) -> Result<Json<PreferencesSaved>, Error> {
    let list = thresholds::parse(&body)?;
    let row = preferences::ActiveModel {
        user_id: Set(me.user_id.clone()),
        thresholds: Set(serde_json::to_string(&list).map_err(|e| Error::Internal(e.to_string()))?),
        updated_at: Set(Utc::now()),
    };
    preferences::Entity::insert(row)
        .on_conflict(
            OnConflict::column(preferences::Column::UserId)
                .update_columns([
                    preferences::Column::Thresholds,
                    preferences::Column::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(state.db.write())
        .await?;
    let saved = preferences::Entity::find_by_id(me.user_id.as_str())
        .one(state.db.write())
        .await?
        .ok_or_else(|| Error::Internal("preferences vanished after saving".to_owned()))?;
    Ok(Json(PreferencesSaved {
        success: true,
        preferences: view(saved),
    }))
}

/// `GET /history` takes at most this many events at once.
pub const MAX_LIMIT: u64 = 500;

#[derive(Deserialize, IntoParams)]
pub struct Page {
    /// Default 50, at most 500 (larger values are capped).
    limit: Option<String>,
    /// Default 0.
    offset: Option<String>,
}

fn page_value(raw: Option<&str>, field: &str, default: u64) -> Result<u64, Error> {
    match raw {
        None | Some("") => Ok(default),
        Some(v) => v
            .trim()
            .parse::<u64>()
            .map_err(|_| input::invalid(field, "must be a non-negative integer")),
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredEvent {
    id: String,
    user_id: String,
    session_id: String,
    timestamp: String,
    model: String,
    input_tokens: i64,
    output_tokens: i64,
    cache_read_tokens: i64,
    cache_write_tokens: i64,
    #[serde(rename = "costUSD")]
    cost_usd: f64,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    created_at: chrono::DateTime<Utc>,
}

#[derive(Serialize, ToSchema)]
pub struct History {
    events: Vec<StoredEvent>,
    limit: u64,
    offset: u64,
}

/// The caller's events, newest first.
#[utoipa::path(get, path = "/history", tag = "usage-alerts", security(("identity" = [])),
    params(Page),
    responses(
        (status = 200, body = History),
        (status = 400, description = "limit or offset is not a non-negative integer", body = ErrorBody),
        (status = 401, body = ErrorBody),
    ))]
pub async fn history(
    State(state): State<AppState>,
    me: Caller,
    Query(page): Query<Page>,
) -> Result<Json<History>, Error> {
    let limit = page_value(page.limit.as_deref(), "limit", 50)?.min(MAX_LIMIT);
    let offset = page_value(page.offset.as_deref(), "offset", 0)?;
    let rows = event::Entity::find()
        .filter(event::Column::UserId.eq(me.user_id.as_str()))
        .order_by_desc(event::Column::Seq)
        .limit(limit)
        .offset(offset)
        .all(state.db.read())
        .await?;
    Ok(Json(History {
        events: rows
            .into_iter()
            .map(|e| StoredEvent {
                id: e.id,
                user_id: e.user_id,
                session_id: e.session_id,
                timestamp: e.timestamp,
                model: e.model,
                input_tokens: e.input_tokens,
                output_tokens: e.output_tokens,
                cache_read_tokens: e.cache_read_tokens,
                cache_write_tokens: e.cache_write_tokens,
                cost_usd: e.cost_usd,
                created_at: e.created_at,
            })
            .collect(),
        limit,
        offset,
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountDeleted {
    success: bool,
    devices_removed: u64,
    events_removed: u64,
}

/// Delete every piece of the caller's data, in one transaction.
#[utoipa::path(delete, path = "/account", tag = "usage-alerts", security(("identity" = [])),
    responses((status = 200, body = AccountDeleted), (status = 401, body = ErrorBody)))]
pub async fn delete_account(
    State(state): State<AppState>,
    me: Caller,
) -> Result<Json<AccountDeleted>, Error> {
    let user = me.user_id.as_str();
    let txn = state.db.begin_write().await?;
    let alert_ids: Vec<String> = alert::Entity::find()
        .select_only()
        .column(alert::Column::Id)
        .filter(alert::Column::UserId.eq(user))
        .into_tuple()
        .all(&txn)
        .await?;
    if !alert_ids.is_empty() {
        delivery::Entity::delete_many()
            .filter(delivery::Column::AlertId.is_in(alert_ids))
            .exec(&txn)
            .await?;
    }
    alert::Entity::delete_many()
        .filter(alert::Column::UserId.eq(user))
        .exec(&txn)
        .await?;
    let devices = device::Entity::delete_many()
        .filter(device::Column::UserId.eq(user))
        .exec(&txn)
        .await?;
    let events = event::Entity::delete_many()
        .filter(event::Column::UserId.eq(user))
        .exec(&txn)
        .await?;
    daily_total::Entity::delete_many()
        .filter(daily_total::Column::UserId.eq(user))
        .exec(&txn)
        .await?;
    day_session::Entity::delete_many()
        .filter(day_session::Column::UserId.eq(user))
        .exec(&txn)
        .await?;
    preferences::Entity::delete_many()
        .filter(preferences::Column::UserId.eq(user))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(Json(AccountDeleted {
        success: true,
        devices_removed: devices.rows_affected,
        events_removed: events.rows_affected,
    }))
}
