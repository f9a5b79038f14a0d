//! What the push process tests share: device rows and counts.

use keel_platform::sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, Set};
use keel_svc::entity::{push_device, push_message};

pub fn device(i: usize) -> push_device::ActiveModel {
    let now = chrono::Utc::now();
    push_device::ActiveModel {
        push_token: Set(format!("ExponentPushToken[crash{i:05}]")),
        device_type: Set("ios".to_owned()),
        device_model: Set(None),
        os_version: Set(None),
        app_version: Set(None),
        locale: Set(None),
        timezone: Set(None),
        user_label: Set(None),
        active: Set(true),
        inactive_reason: Set(None),
        app_id: Set("seed".to_owned()),
        registered_at: Set(now),
        updated_at: Set(now),
    }
}

pub async fn sent_in_db(db: &keel_platform::db::Db) -> u64 {
    push_message::Entity::find()
        .filter(push_message::Column::Status.eq("sent"))
        .count(db.read())
        .await
        .unwrap()
}

/// `devices` devices straight into the database, and an admin `boss`;
/// its application password.
pub async fn seed(platform: &keel_platform::Platform, devices: usize) -> String {
    let rows: Vec<_> = (0..devices).map(device).collect();
    for chunk in rows.chunks(500) {
        push_device::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(platform.db.write())
            .await
            .unwrap();
    }
    keel_svc::domain::admin::add_user(&platform.db, "boss", None, true)
        .await
        .unwrap();
    keel_svc::domain::admin::add_app_password(&platform.db, "boss", "ci")
        .await
        .unwrap()
}
