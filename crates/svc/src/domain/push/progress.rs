//! How far a send has come.

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ColumnTrait, DbErr, EntityTrait, ExprTrait, QueryFilter, QuerySelect,
};
use serde::Serialize;
use utoipa::ToSchema;

use crate::entity::push_message::{self, MessageStatus, ReceiptStatus};
use crate::entity::push_send;

/// How far a send has come.
#[derive(Debug, Default, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct Progress {
    /// Not yet due, or due and waiting for a batch.
    pub pending: u64,
    /// In a batch on its way to Expo.
    pub queued: u64,
    /// Accepted by Expo (ticket ok).
    pub sent: u64,
    /// Refused (ticket error, or the request was).
    pub failed: u64,
    pub cancelled: u64,
    /// Not sent: the device was unregistered (or reported gone) before its
    /// batch went out.
    pub skipped: u64,
    pub receipts_ok: u64,
    pub receipts_error: u64,
}

/// The send's messages counted by status and receipt, in one pass over
/// them (a large send's progress is asked while it goes out: two passes
/// doubled what each poll cost the database).
pub async fn progress(db: &Db, send_id: &str) -> Result<Progress, DbErr> {
    let groups: Vec<(MessageStatus, Option<ReceiptStatus>, i64)> = push_message::Entity::find()
        .select_only()
        .column(push_message::Column::Status)
        .column(push_message::Column::ReceiptStatus)
        .column_as(Expr::col(push_message::Column::PushToken).count(), "n")
        .filter(push_message::Column::SendId.eq(send_id))
        .group_by(push_message::Column::Status)
        .group_by(push_message::Column::ReceiptStatus)
        .into_tuple()
        .all(db.read())
        .await?;
    let mut p = Progress::default();
    for (status, receipt, n) in groups {
        let n = u64::try_from(n).unwrap_or(0);
        *match status {
            MessageStatus::Pending => &mut p.pending,
            MessageStatus::Batched => &mut p.queued,
            MessageStatus::Sent => &mut p.sent,
            MessageStatus::Error => &mut p.failed,
            MessageStatus::Cancelled => &mut p.cancelled,
            MessageStatus::Skipped => &mut p.skipped,
        } += n;
        match receipt {
            Some(ReceiptStatus::Ok) => p.receipts_ok += n,
            Some(ReceiptStatus::Error) => p.receipts_error += n,
            None => {}
        }
    }
    Ok(p)
}

/// Where a send stands as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SendStatus {
    /// Nothing due yet.
    Scheduled,
    Queued,
    Sending,
    /// Every message handed over (or ended otherwise).
    Sent,
    Cancelled,
}

pub fn status_of(send: &push_send::Model, p: &Progress, now: DateTime<Utc>) -> SendStatus {
    if send.cancelled {
        SendStatus::Cancelled
    } else if p.pending == 0 && p.queued == 0 {
        SendStatus::Sent
    } else if p.sent + p.failed + p.queued > 0 {
        SendStatus::Sending
    } else if send.send_at > now || send.local_time.is_some() {
        SendStatus::Scheduled
    } else {
        SendStatus::Queued
    }
}
