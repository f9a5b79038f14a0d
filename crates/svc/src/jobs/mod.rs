//! Push delivery as durable jobs, one per file with its payload, retry
//! policy and handler:
//!
//! - [`dispatch`] cuts a send's due messages into batches of at most 100,
//!   each recorded (`batched`, with its batch id) in the same transaction as
//!   the job that sends it;
//! - [`send_batch`] makes one Expo request for its batch and stores every
//!   ticket in one statement; a batch whose tickets are stored is never sent
//!   again, so a crash resumes with exactly the batches Expo has not
//!   answered;
//! - [`receipts`] fetches receipts after the configured delay.
//!
//! A `DeviceNotRegistered` ticket or receipt marks the device inactive.

mod counters;
pub mod dispatch;
pub mod idempotency_purge;
mod outcome;
pub mod receipts;
pub mod send_batch;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::jobs::{JobError, JobRegistry};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use crate::entity::push_device;
use crate::expo::Expo;

const DEVICE_NOT_REGISTERED: &str = "DeviceNotRegistered";

/// What the delivery jobs share.
#[derive(Clone)]
pub struct Delivery {
    db: Db,
    expo: Arc<Expo>,
    receipt_delay: std::time::Duration,
    /// One receipts run at a time in this process: every batch schedules
    /// one, and the first due asks for all that are due, so the others
    /// find nothing left instead of asking for the same ids at once.
    receipts_running: Arc<tokio::sync::Mutex<()>>,
    /// Wakes the job worker when a dispatch round has committed batches,
    /// so they go out at once rather than at the worker's next poll.
    wake: Arc<tokio::sync::Notify>,
}

impl Delivery {
    pub fn new(
        db: Db,
        expo: Expo,
        receipt_delay: std::time::Duration,
        wake: Arc<tokio::sync::Notify>,
    ) -> Self {
        Self {
            db,
            expo: Arc::new(expo),
            receipt_delay,
            receipts_running: Arc::default(),
            wake,
        }
    }

    fn wake_worker(&self) {
        self.wake.notify_one();
    }

    fn delay(&self) -> chrono::Duration {
        chrono::Duration::from_std(self.receipt_delay).unwrap_or_default()
    }
}

/// Runs the delivery jobs in this process.
pub fn register(registry: &mut JobRegistry, d: &Delivery) {
    dispatch::register(registry, d.clone());
    send_batch::register(registry, d.clone());
    receipts::register(registry, d.clone());
}

/// `t` rounded up to the minute, or to the second when `delay` is under a
/// minute.
fn round_up(t: DateTime<Utc>, delay: chrono::Duration) -> DateTime<Utc> {
    let bucket = if delay >= chrono::Duration::minutes(1) {
        60_000
    } else {
        1000
    };
    let ms = t.timestamp_millis();
    let rounded = ms.div_euclid(bucket) * bucket
        + if ms.rem_euclid(bucket) == 0 {
            0
        } else {
            bucket
        };
    DateTime::from_timestamp_millis(rounded).unwrap_or(t)
}

/// Marks the devices Expo no longer knows inactive.
async fn deactivate<C: ConnectionTrait>(conn: &C, tokens: &[String]) -> Result<(), JobError> {
    if tokens.is_empty() {
        return Ok(());
    }
    push_device::Entity::update_many()
        .col_expr(push_device::Column::Active, Expr::value(false))
        .col_expr(
            push_device::Column::InactiveReason,
            Expr::value(DEVICE_NOT_REGISTERED),
        )
        .col_expr(push_device::Column::UpdatedAt, Expr::value(Utc::now()))
        .filter(push_device::Column::PushToken.is_in(tokens.iter().map(String::as_str)))
        .exec(conn)
        .await?;
    Ok(())
}
