//! The receipts job: asks Expo for the receipts of a send's tickets old
//! enough to have one, 1000 at a time; asks again later for those not
//! ready yet, for up to a day (Expo keeps them no longer), and while a
//! batch of the send is still on its way. One job per send and minute
//! (its key), however many batches went out in that minute.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use keel_platform::jobs::{self, Job, JobContext, JobError, JobRegistry};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use serde::{Deserialize, Serialize};

use super::{DEVICE_NOT_REGISTERED, Delivery, deactivate, round_up};
use crate::domain::push::counts::Delta;
use crate::entity::push_message::{self, MessageStatus, ReceiptStatus};
use crate::expo::{Failure, MAX_RECEIPT_IDS, Receipt};

/// Receipts vanish after a day; stop asking then.
const RECEIPTS_KEPT_HOURS: i64 = 24;

#[derive(Debug, Serialize, Deserialize)]
pub struct Receipts {
    pub send_id: String,
}

impl Job for Receipts {
    const KIND: &'static str = "svc.push.receipts";
}

pub fn register(registry: &mut JobRegistry, d: Delivery) {
    registry.register(move |job: Receipts, _ctx: JobContext| {
        let d = d.clone();
        async move { run(&d, &job.send_id).await }
    });
}

/// (push token, ticket id, sent at) of a message awaiting its receipt.
type Awaited = (String, Option<String>, Option<DateTime<Utc>>);

async fn run(d: &Delivery, send_id: &str) -> Result<(), JobError> {
    let _one_at_a_time = d.receipts_running.lock().await;
    let delay = d.delay();
    let now = Utc::now();
    let mut after = String::new();
    let mut missing = false;
    loop {
        let page: Vec<Awaited> = push_message::Entity::find()
            .select_only()
            .column(push_message::Column::PushToken)
            .column(push_message::Column::TicketId)
            .column(push_message::Column::SentAt)
            .filter(push_message::Column::SendId.eq(send_id))
            .filter(push_message::Column::Status.eq(MessageStatus::Sent))
            .filter(push_message::Column::ReceiptStatus.is_null())
            .filter(push_message::Column::SentAt.lte(now - delay))
            .filter(push_message::Column::PushToken.gt(after.as_str()))
            .order_by_asc(push_message::Column::PushToken)
            .limit(u64::try_from(MAX_RECEIPT_IDS).unwrap_or(1000))
            .into_tuple()
            .all(d.db.read())
            .await?;
        let Some(last) = page.last() else { break };
        after = last.0.clone();
        let ids: Vec<String> = page.iter().filter_map(|(_, id, _)| id.clone()).collect();
        let receipts = match d.expo.receipts(&ids).await {
            Ok(r) => r,
            Err(Failure::Retry { reason, after }) => {
                return Err(after.map_or_else(
                    || JobError::retry(reason.clone()),
                    |a| JobError::retry_after(reason.clone(), a),
                ));
            }
            Err(Failure::Rejected { reason }) => {
                tracing::warn!(send = %send_id, %reason, "Expo refused a receipts request");
                return Ok(());
            }
        };
        missing |= store(d, send_id, &page, &receipts, now).await?;
    }
    // Not all receipts were ready, or a batch that shares this job's
    // minute was still on its way or came back after this run began (its
    // messages not seen above, and its own request for receipts merged
    // into this job): ask again after another delay (one job however many
    // runs want it).
    if missing || unasked(d, send_id, now - delay).await? {
        let at = round_up(now + delay.max(chrono::Duration::seconds(1)), delay);
        let job = Receipts {
            send_id: send_id.to_owned(),
        };
        jobs::enqueue_unique(d.db.write(), &job, &key(send_id, at), at).await?;
    }
    Ok(())
}

/// The receipts job of a send that runs at `at`.
pub fn key(send_id: &str, at: DateTime<Utc>) -> String {
    format!("receipts:{send_id}:{}", at.timestamp())
}

/// Whether a message of the send is still on its way to Expo, or was sent
/// after `cutoff` (this run's page took those sent before) and awaits
/// its receipt.
async fn unasked(d: &Delivery, send_id: &str, cutoff: DateTime<Utc>) -> Result<bool, JobError> {
    use keel_platform::sea_orm::Condition;
    let later = Condition::all()
        .add(push_message::Column::Status.eq(MessageStatus::Sent))
        .add(push_message::Column::ReceiptStatus.is_null())
        .add(push_message::Column::SentAt.gt(cutoff));
    let one = push_message::Entity::find()
        .select_only()
        .column(push_message::Column::PushToken)
        .filter(push_message::Column::SendId.eq(send_id))
        .filter(
            Condition::any()
                .add(push_message::Column::Status.eq(MessageStatus::Batched))
                .add(later),
        )
        .limit(1)
        .into_tuple::<String>()
        .one(d.db.read())
        .await?;
    Ok(one.is_some())
}

/// Stores the page's receipts in one transaction; true if some that may
/// still come are missing.
async fn store(
    d: &Delivery,
    send_id: &str,
    page: &[Awaited],
    receipts: &HashMap<String, Receipt>,
    now: DateTime<Utc>,
) -> Result<bool, JobError> {
    let mut missing = false;
    let mut gone = Vec::new();
    let mut delta = Delta::default();
    let mut counted = Vec::new();
    let txn = d.db.begin_write().await?;
    for (token, id, sent_at) in page {
        let Some(r) = id.as_ref().and_then(|id| receipts.get(id)) else {
            let young =
                sent_at.is_some_and(|s| s > now - chrono::Duration::hours(RECEIPTS_KEPT_HOURS));
            missing |= young;
            continue;
        };
        let error = (r.status != "ok").then(|| {
            r.details
                .as_ref()
                .and_then(|d| d.error.clone())
                .unwrap_or_else(|| "UNKNOWN_ERROR".to_owned())
        });
        if error.as_deref() == Some(DEVICE_NOT_REGISTERED) {
            gone.push(token.clone());
        }
        let status = if error.is_some() {
            ReceiptStatus::Error
        } else {
            ReceiptStatus::Ok
        };
        let stored = push_message::Entity::update_many()
            .col_expr(push_message::Column::ReceiptStatus, Expr::value(status))
            .col_expr(
                push_message::Column::ReceiptError,
                Expr::value(error.clone()),
            )
            .filter(push_message::Column::SendId.eq(send_id))
            .filter(push_message::Column::PushToken.eq(token.as_str()))
            .filter(push_message::Column::ReceiptStatus.is_null())
            .exec(&txn)
            .await?
            .rows_affected;
        delta.receipts(status, stored);
        if stored > 0 {
            counted.push(error);
        }
    }
    delta.apply(&txn, send_id).await?;
    deactivate(&txn, &gone).await?;
    txn.commit().await?;
    super::counters::receipts(&counted);
    Ok(missing)
}
