//! Device and delivery counts.

use std::collections::BTreeMap;

use keel_platform::db::Db;
use keel_platform::sea_orm::DbErr;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, ExprTrait, QueryFilter, QuerySelect};
use serde::Serialize;
use utoipa::ToSchema;

use crate::entity::{push_device, push_message};

#[derive(Debug, Serialize, ToSchema)]
pub struct Stats {
    pub devices: DeviceStats,
    pub deliveries: DeliveryStats,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceStats {
    pub total: u64,
    pub active: u64,
    pub inactive: u64,
    /// Every device, by `ios` / `android`.
    pub by_type: BTreeMap<String, u64>,
    /// Every device, by app version (`unknown` when none was given).
    pub by_app_version: BTreeMap<String, u64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryStats {
    /// Not yet handed to Expo (pending or in a batch).
    pub queued: u64,
    /// Accepted by Expo (ticket ok).
    pub sent: u64,
    /// Ticket (or request) errors, by code.
    pub ticket_errors: BTreeMap<String, u64>,
    pub receipts: ReceiptStats,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptStats {
    pub ok: u64,
    /// Receipt errors, by code.
    pub error: BTreeMap<String, u64>,
}

/// status, ticket error, receipt status, receipt error, count
type MessageGroup = (String, Option<String>, Option<String>, Option<String>, i64);

fn n(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

pub async fn collect(db: &Db) -> Result<Stats, DbErr> {
    let by: Vec<(String, bool, Option<String>, i64)> = push_device::Entity::find()
        .select_only()
        .column(push_device::Column::DeviceType)
        .column(push_device::Column::Active)
        .column(push_device::Column::AppVersion)
        .column_as(Expr::col(push_device::Column::PushToken).count(), "n")
        .group_by(push_device::Column::DeviceType)
        .group_by(push_device::Column::Active)
        .group_by(push_device::Column::AppVersion)
        .into_tuple()
        .all(db.read())
        .await?;
    let mut devices = DeviceStats {
        total: 0,
        active: 0,
        inactive: 0,
        by_type: BTreeMap::new(),
        by_app_version: BTreeMap::new(),
    };
    for (kind, active, version, count) in by {
        let count = n(count);
        devices.total += count;
        if active {
            devices.active += count;
        } else {
            devices.inactive += count;
        }
        *devices.by_type.entry(kind).or_default() += count;
        *devices
            .by_app_version
            .entry(version.unwrap_or_else(|| "unknown".to_owned()))
            .or_default() += count;
    }
    let msgs: Vec<MessageGroup> = push_message::Entity::find()
        .select_only()
        .column(push_message::Column::Status)
        .column(push_message::Column::TicketError)
        .column(push_message::Column::ReceiptStatus)
        .column(push_message::Column::ReceiptError)
        .column_as(Expr::col(push_message::Column::PushToken).count(), "n")
        .filter(push_message::Column::Status.ne("cancelled"))
        .group_by(push_message::Column::Status)
        .group_by(push_message::Column::TicketError)
        .group_by(push_message::Column::ReceiptStatus)
        .group_by(push_message::Column::ReceiptError)
        .into_tuple()
        .all(db.read())
        .await?;
    let mut deliveries = DeliveryStats {
        queued: 0,
        sent: 0,
        ticket_errors: BTreeMap::new(),
        receipts: ReceiptStats {
            ok: 0,
            error: BTreeMap::new(),
        },
    };
    for (status, ticket_error, receipt, receipt_error, count) in msgs {
        let count = n(count);
        match status.as_str() {
            "pending" | "batched" => deliveries.queued += count,
            "sent" => deliveries.sent += count,
            _ => {
                *deliveries
                    .ticket_errors
                    .entry(ticket_error.unwrap_or_else(|| "UNKNOWN_ERROR".to_owned()))
                    .or_default() += count;
            }
        }
        match receipt.as_deref() {
            Some("ok") => deliveries.receipts.ok += count,
            Some(_) => {
                *deliveries
                    .receipts
                    .error
                    .entry(receipt_error.unwrap_or_else(|| "UNKNOWN_ERROR".to_owned()))
                    .or_default() += count;
            }
            None => {}
        }
    }
    Ok(Stats {
        devices,
        deliveries,
    })
}
