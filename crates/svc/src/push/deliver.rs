//! Delivery as durable jobs.
//!
//! `Dispatch` cuts a send's due messages into batches of at most 100, each
//! recorded (`batched`, with its batch id) in the same transaction as the job
//! that sends it. `SendBatch` makes one Expo request for its batch and stores
//! every ticket in one statement; a batch whose tickets are stored is never
//! sent again, so a crash resumes with exactly the batches Expo has not
//! answered. `Receipts` fetches receipts after the configured delay. A
//! `DeviceNotRegistered` ticket or receipt marks the device inactive.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::jobs::{self, Job, JobContext, JobError, JobRegistry};
use keel_platform::sea_orm::sea_query::{Expr, OnConflict};
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::expo::{Expo, Failure, MAX_MESSAGES, MAX_RECEIPT_IDS, Message, Ticket};
use super::send::{earliest_pending, schedule_dispatch};
use crate::entity::{push_message, push_send};

const DEVICE_NOT_REGISTERED: &str = "DeviceNotRegistered";

/// A send with at least this many recipients has PostgreSQL refresh the
/// messages table's statistics before batching: right after a bulk insert
/// they still describe a small table, and the planner then batches by
/// scanning every pending message of the send instead of using the key.
const ANALYZE_FROM_RECIPIENTS: i64 = 1000;

/// Receipts vanish after a day; stop asking then.
const RECEIPTS_KEPT_HOURS: i64 = 24;

#[derive(Debug, Serialize, Deserialize)]
pub struct Dispatch {
    pub send_id: String,
}

impl Job for Dispatch {
    const KIND: &'static str = "svc.push.dispatch";
}

#[derive(Debug, Serialize, Deserialize)]
pub struct SendBatch {
    pub send_id: String,
    pub batch_id: String,
}

impl Job for SendBatch {
    const KIND: &'static str = "svc.push.batch";
    const MAX_ATTEMPTS: u32 = 10;
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Receipts {
    pub send_id: String,
}

impl Job for Receipts {
    const KIND: &'static str = "svc.push.receipts";
}

#[derive(Clone)]
pub struct Delivery {
    db: Db,
    expo: Arc<Expo>,
    receipt_delay: std::time::Duration,
    /// One receipts run at a time in this process: every batch schedules
    /// one, and the first due asks for all that are due, so the others
    /// find nothing left instead of asking for the same ids at once.
    receipts_running: Arc<tokio::sync::Mutex<()>>,
}

impl Delivery {
    pub fn new(db: Db, expo: Expo, receipt_delay: std::time::Duration) -> Self {
        Self {
            db,
            expo: Arc::new(expo),
            receipt_delay,
            receipts_running: Arc::default(),
        }
    }
}

pub fn register(registry: &mut JobRegistry, d: Delivery) {
    let dispatch = d.clone();
    registry.register(move |job: Dispatch, _ctx: JobContext| {
        let d = dispatch.clone();
        async move { d.dispatch(&job.send_id).await }
    });
    let batch = d.clone();
    registry.register(move |job: SendBatch, ctx: JobContext| {
        let d = batch.clone();
        async move { d.send_batch(&job, ctx).await }
    });
    registry.register(move |job: Receipts, _ctx: JobContext| {
        let d = d.clone();
        async move { d.receipts(&job.send_id).await }
    });
}

fn db_err(e: crate::error::Error) -> JobError {
    JobError::retry(e.to_string())
}

impl Delivery {
    /// Batches every due message of the send; schedules itself again for
    /// messages due later (local-time sends).
    async fn dispatch(&self, send_id: &str) -> Result<(), JobError> {
        let Some(send) = push_send::Entity::find_by_id(send_id)
            .one(self.db.read())
            .await?
        else {
            return Ok(());
        };
        if send.cancelled {
            return Ok(());
        }
        if self.db.is_postgres() && send.recipients >= ANALYZE_FROM_RECIPIENTS {
            self.db
                .write()
                .execute_unprepared("ANALYZE svc_push_messages")
                .await?;
        }
        loop {
            let now = Utc::now();
            let due: Vec<String> = push_message::Entity::find()
                .select_only()
                .column(push_message::Column::PushToken)
                .filter(push_message::Column::SendId.eq(send_id))
                .filter(push_message::Column::Status.eq("pending"))
                .filter(push_message::Column::DueAt.lte(now))
                // The (send_id, status, due_at) index's own order: the
                // query stops after the limit instead of sorting every
                // pending message of the send each round.
                .order_by_asc(push_message::Column::DueAt)
                .limit(u64::try_from(MAX_MESSAGES * 20).unwrap_or(2000))
                .into_tuple()
                .all(self.db.read())
                .await?;
            if due.is_empty() {
                break;
            }
            let txn = self.db.begin_write().await?;
            for chunk in due.chunks(MAX_MESSAGES) {
                let batch_id = uuid::Uuid::new_v4().to_string();
                push_message::Entity::update_many()
                    .col_expr(push_message::Column::Status, Expr::value("batched"))
                    .col_expr(
                        push_message::Column::BatchId,
                        Expr::value(batch_id.as_str()),
                    )
                    .filter(push_message::Column::SendId.eq(send_id))
                    .filter(push_message::Column::PushToken.is_in(chunk.iter().map(String::as_str)))
                    .filter(push_message::Column::Status.eq("pending"))
                    .exec(&txn)
                    .await?;
                let job = SendBatch {
                    send_id: send_id.to_owned(),
                    batch_id: batch_id.clone(),
                };
                jobs::enqueue_unique(&txn, &job, &format!("batch:{batch_id}"), now).await?;
            }
            txn.commit().await?;
        }
        if let Some(next) = earliest_pending(self.db.read(), send_id)
            .await
            .map_err(db_err)?
        {
            schedule_dispatch(self.db.write(), send_id, next)
                .await
                .map_err(db_err)?;
        }
        Ok(())
    }

    async fn send_batch(&self, job: &SendBatch, ctx: JobContext) -> Result<(), JobError> {
        let messages = push_message::Entity::find()
            .filter(push_message::Column::BatchId.eq(job.batch_id.as_str()))
            .filter(push_message::Column::Status.eq("batched"))
            .order_by_asc(push_message::Column::PushToken)
            .all(self.db.read())
            .await?;
        if messages.is_empty() {
            return Ok(()); // answered already
        }
        let Some(send) = push_send::Entity::find_by_id(job.send_id.as_str())
            .one(self.db.read())
            .await?
        else {
            return Ok(());
        };
        if send.cancelled {
            return self.finish(&messages, |_| Outcome::Cancelled).await;
        }
        let data: Option<Value> = send
            .data
            .as_deref()
            .and_then(|d| serde_json::from_str(d).ok());
        let out: Vec<Message> = messages
            .iter()
            .map(|m| Message {
                to: m.push_token.clone(),
                title: send.title.clone(),
                body: send.body.clone(),
                data: data.clone(),
                sound: "default",
                priority: "high",
            })
            .collect();
        match self.expo.send(&out).await {
            Ok(tickets) => {
                let now = Utc::now();
                let receipts = (job.send_id.as_str(), self.receipts_at(now));
                self.finish_with(&messages, Some(receipts), |i| {
                    Outcome::Ticket(tickets.get(i).cloned(), now)
                })
                .await
            }
            Err(Failure::Rejected { reason }) => {
                tracing::warn!(batch = %job.batch_id, %reason, "Expo refused a batch; not retrying");
                self.finish(&messages, |_| Outcome::Refused(reason.clone()))
                    .await
            }
            Err(Failure::Retry { reason, .. }) if ctx.is_last_attempt() => {
                tracing::error!(batch = %job.batch_id, %reason, "a batch failed on every attempt");
                self.finish(&messages, |_| {
                    Outcome::Refused(format!("RETRIES_EXHAUSTED: {reason}"))
                })
                .await
            }
            Err(Failure::Retry { reason, after }) => Err(match after {
                Some(after) => JobError::retry_after(reason, after),
                None => JobError::retry(reason),
            }),
        }
    }

    /// Stores every message's outcome in one statement; deactivates devices
    /// Expo no longer knows.
    async fn finish(
        &self,
        messages: &[push_message::Model],
        outcome: impl Fn(usize) -> Outcome,
    ) -> Result<(), JobError> {
        self.finish_with(messages, None, outcome).await
    }

    /// When the receipts of tickets got at `sent` are asked for: after the
    /// delay, rounded up to the minute (to the second for delays under a
    /// minute), so one request serves every batch of that minute.
    fn receipts_at(&self, sent: DateTime<Utc>) -> DateTime<Utc> {
        let delay = chrono::Duration::from_std(self.receipt_delay).unwrap_or_default();
        round_up(sent + delay, delay)
    }

    /// Stores the outcomes, and, for accepted batches, a receipts job in
    /// the same transaction (each batch has its own, so none is missed; the
    /// first to run asks for every receipt due by then).
    async fn finish_with(
        &self,
        messages: &[push_message::Model],
        receipts: Option<(&str, DateTime<Utc>)>,
        outcome: impl Fn(usize) -> Outcome,
    ) -> Result<(), JobError> {
        let mut gone = Vec::new();
        let rows: Vec<push_message::ActiveModel> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut row = push_message::ActiveModel {
                    send_id: Set(m.send_id.clone()),
                    push_token: Set(m.push_token.clone()),
                    due_at: Set(m.due_at),
                    status: Set("error".to_owned()),
                    batch_id: Set(m.batch_id.clone()),
                    ticket_id: Set(None),
                    ticket_error: Set(None),
                    sent_at: Set(None),
                    receipt_status: Set(None),
                    receipt_error: Set(None),
                };
                match outcome(i) {
                    Outcome::Ticket(Some(t), at) if t.status == "ok" => {
                        row.status = Set("sent".to_owned());
                        row.ticket_id = Set(t.id);
                        row.sent_at = Set(Some(at));
                    }
                    Outcome::Ticket(t, at) => {
                        let code = t
                            .as_ref()
                            .and_then(|t: &Ticket| t.details.as_ref().and_then(|d| d.error.clone()))
                            .unwrap_or_else(|| "UNKNOWN_ERROR".to_owned());
                        if code == DEVICE_NOT_REGISTERED {
                            gone.push(m.push_token.clone());
                        }
                        row.ticket_error = Set(Some(code));
                        row.sent_at = Set(Some(at));
                    }
                    Outcome::Refused(reason) => {
                        row.ticket_error = Set(Some(reason.chars().take(64).collect()))
                    }
                    Outcome::Cancelled => row.status = Set("cancelled".to_owned()),
                }
                row
            })
            .collect();
        let txn = self.db.begin_write().await?;
        push_message::Entity::insert_many(rows)
            .on_conflict(
                OnConflict::columns([
                    push_message::Column::SendId,
                    push_message::Column::PushToken,
                ])
                .update_columns([
                    push_message::Column::Status,
                    push_message::Column::TicketId,
                    push_message::Column::TicketError,
                    push_message::Column::SentAt,
                ])
                .to_owned(),
            )
            .exec_without_returning(&txn)
            .await?;
        deactivate(&txn, &gone).await?;
        if let Some((send_id, at)) = receipts {
            let job = Receipts {
                send_id: send_id.to_owned(),
            };
            jobs::enqueue_at(&txn, &job, at).await?;
        }
        txn.commit().await?;
        Ok(())
    }

    /// Receipts of the send's tickets old enough to have one, 1000 at a time.
    async fn receipts(&self, send_id: &str) -> Result<(), JobError> {
        let _one_at_a_time = self.receipts_running.lock().await;
        let delay = chrono::Duration::from_std(self.receipt_delay).unwrap_or_default();
        let now = Utc::now();
        let mut after = String::new();
        let mut missing = false;
        loop {
            let page: Vec<(String, Option<String>, Option<DateTime<Utc>>)> =
                push_message::Entity::find()
                    .select_only()
                    .column(push_message::Column::PushToken)
                    .column(push_message::Column::TicketId)
                    .column(push_message::Column::SentAt)
                    .filter(push_message::Column::SendId.eq(send_id))
                    .filter(push_message::Column::Status.eq("sent"))
                    .filter(push_message::Column::ReceiptStatus.is_null())
                    .filter(push_message::Column::SentAt.lte(now - delay))
                    .filter(push_message::Column::PushToken.gt(after.as_str()))
                    .order_by_asc(push_message::Column::PushToken)
                    .limit(u64::try_from(MAX_RECEIPT_IDS).unwrap_or(1000))
                    .into_tuple()
                    .all(self.db.read())
                    .await?;
            let Some(last) = page.last() else { break };
            after = last.0.clone();
            let ids: Vec<String> = page.iter().filter_map(|(_, id, _)| id.clone()).collect();
            let receipts = match self.expo.receipts(&ids).await {
                Ok(r) => r,
                Err(Failure::Retry { reason, after }) => {
                    return Err(after.map_or_else(
                        || JobError::retry(&reason),
                        |a| JobError::retry_after(&reason, a),
                    ));
                }
                Err(Failure::Rejected { reason }) => {
                    tracing::warn!(send = %send_id, %reason, "Expo refused a receipts request");
                    return Ok(());
                }
            };
            let mut gone = Vec::new();
            let txn = self.db.begin_write().await?;
            for (token, id, sent_at) in &page {
                let Some(r) = id.as_ref().and_then(|id| receipts.get(id)) else {
                    let young = sent_at
                        .is_some_and(|s| s > now - chrono::Duration::hours(RECEIPTS_KEPT_HOURS));
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
                push_message::Entity::update_many()
                    .col_expr(
                        push_message::Column::ReceiptStatus,
                        Expr::value(if error.is_some() { "error" } else { "ok" }),
                    )
                    .col_expr(push_message::Column::ReceiptError, Expr::value(error))
                    .filter(push_message::Column::SendId.eq(send_id))
                    .filter(push_message::Column::PushToken.eq(token.as_str()))
                    .exec(&txn)
                    .await?;
            }
            deactivate(&txn, &gone).await?;
            txn.commit().await?;
        }
        if missing {
            // Not all receipts were ready: ask again after another delay
            // (one job however many runs found receipts missing).
            let at = round_up(now + delay.max(chrono::Duration::seconds(1)), delay);
            let key = format!("receipts:{send_id}:again:{}", at.timestamp());
            let job = Receipts {
                send_id: send_id.to_owned(),
            };
            jobs::enqueue_unique(self.db.write(), &job, &key, at).await?;
        }
        Ok(())
    }
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

enum Outcome {
    Ticket(Option<Ticket>, DateTime<Utc>),
    Refused(String),
    Cancelled,
}

async fn deactivate<C: ConnectionTrait>(conn: &C, tokens: &[String]) -> Result<(), JobError> {
    if tokens.is_empty() {
        return Ok(());
    }
    use crate::entity::push_device;
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
