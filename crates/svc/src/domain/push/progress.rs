//! How far a send has come.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::entity::push_send;

/// How far a send has come. (`SendProgress` in the documents: the
/// console's holds accounts' `Progress` too.)
#[derive(Debug, Default, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[schema(as = SendProgress)]
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

impl Progress {
    /// The counts the send keeps (see `counts`).
    pub fn of(send: &push_send::Model) -> Self {
        let n = |v: i64| u64::try_from(v).unwrap_or(0);
        Self {
            pending: n(send.n_pending),
            queued: n(send.n_queued),
            sent: n(send.n_sent),
            failed: n(send.n_failed),
            cancelled: n(send.n_cancelled),
            skipped: n(send.n_skipped),
            receipts_ok: n(send.n_receipts_ok),
            receipts_error: n(send.n_receipts_error),
        }
    }
}

/// Where a send stands as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
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
