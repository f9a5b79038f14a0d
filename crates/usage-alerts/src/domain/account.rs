//! Deleting every piece of a user's data.

use keel_platform::db::Db;
use keel_platform::sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, QuerySelect};

use crate::entity::{alert, daily_total, day_session, delivery, device, event, preferences};

/// What a deletion removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Removed {
    pub devices: u64,
    pub events: u64,
}

/// Removes the user's devices, events, totals, alerts and preferences in
/// one transaction.
pub async fn delete_all(db: &Db, user: &str) -> Result<Removed, DbErr> {
    let txn = db.begin_write().await?;
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
    Ok(Removed {
        devices: devices.rows_affected,
        events: events.rows_affected,
    })
}
