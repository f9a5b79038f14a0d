//! A user's push devices: registered (or moved to this user), listed,
//! removed. A device token is unique across users.

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, Set};
use keel_platform::time::millis;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::values::{DeviceToken, Platform, flag};
use crate::entity::device;

/// The body of POST /register.
#[derive(Debug, Deserialize, ToSchema)]
pub struct Registration {
    /// The APNs device token: 64 to 200 hexadecimal characters.
    #[schema(value_type = String, pattern = "^([0-9a-fA-F]{2}){32,100}$")]
    pub device_token: DeviceToken,
    pub platform: Platform,
    /// Use the APNs sandbox (development builds).
    #[serde(default, deserialize_with = "flag")]
    pub sandbox: Option<bool>,
}

/// The body of DELETE /register (camelCase, unlike POST's).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Unregistration {
    #[schema(inline)]
    pub device_token: super::values::Text<400>,
}

keel_platform::required_fields!(Registration, Unregistration);

/// A Device (elements of `devices` in GET /device).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    pub device_token: String,
    pub platform: Platform,
    pub user_id: String,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub registered_at: DateTime<Utc>,
    pub sandbox: bool,
}

/// Registers the device for `user_id` (updating it if it is known).
pub async fn register(db: &Db, user_id: &str, r: Registration) -> Result<(), DbErr> {
    let row = device::ActiveModel {
        device_token: Set(r.device_token.into_string()),
        user_id: Set(user_id.to_owned()),
        platform: Set(r.platform),
        sandbox: Set(r.sandbox.unwrap_or(false)),
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
        .exec_without_returning(db.write())
        .await?;
    Ok(())
}

/// Removes the user's device with this token; false if the user has none.
pub async fn remove(db: &Db, user_id: &str, token: &DeviceToken) -> Result<bool, DbErr> {
    let res = device::Entity::delete_many()
        .filter(device::Column::DeviceToken.eq(token.as_str()))
        .filter(device::Column::UserId.eq(user_id))
        .exec(db.write())
        .await?;
    Ok(res.rows_affected > 0)
}

/// The user's devices, oldest registration first.
pub async fn list(db: &Db, user_id: &str) -> Result<Vec<Device>, DbErr> {
    let rows = device::Entity::find()
        .filter(device::Column::UserId.eq(user_id))
        .order_by_asc(device::Column::RegisteredAt)
        .all(db.read())
        .await?;
    Ok(rows
        .into_iter()
        .map(|d| Device {
            device_token: d.device_token,
            platform: d.platform,
            user_id: d.user_id,
            registered_at: d.registered_at,
            sandbox: d.sandbox,
        })
        .collect())
}
