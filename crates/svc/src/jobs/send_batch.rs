//! The send-batch job: one Expo request for a batch of at most 100
//! messages, every outcome stored in one statement with the receipts job.
//! Devices no longer active when the batch goes out are skipped.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::jobs::{self, Job, JobContext, JobError, JobRegistry};
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::outcome::{self, Written};
use super::receipts::Receipts;
use super::{DEVICE_NOT_REGISTERED, Delivery, deactivate, round_up};
use crate::domain::push::counts::{self, Delta};
use crate::entity::push_message::{self, MessageStatus};
use crate::entity::{push_device, push_send};
use crate::expo::{Failure, Message, Ticket};

#[derive(Debug, Serialize, Deserialize)]
pub struct SendBatch {
    pub send_id: String,
    pub batch_id: String,
}

impl Job for SendBatch {
    const KIND: &'static str = "svc.push.batch";
    const MAX_ATTEMPTS: u32 = 10;
}

pub fn register(registry: &mut JobRegistry, d: Delivery) {
    registry.register(move |job: SendBatch, ctx: JobContext| {
        let d = d.clone();
        async move { run(&d, &job, ctx).await }
    });
}

/// How one message of the batch ended.
enum Outcome {
    Ticket(Option<Ticket>, DateTime<Utc>),
    Refused(String),
    Cancelled,
    /// The device was no longer active when its batch went out.
    Skipped,
}

async fn run(d: &Delivery, job: &SendBatch, ctx: JobContext) -> Result<(), JobError> {
    let messages = push_message::Entity::find()
        .filter(push_message::Column::BatchId.eq(job.batch_id.as_str()))
        .filter(push_message::Column::Status.eq(MessageStatus::Batched))
        .order_by_asc(push_message::Column::PushToken)
        .all(d.db.read())
        .await?;
    if messages.is_empty() {
        return Ok(()); // answered already
    }
    let Some(send) = push_send::Entity::find_by_id(job.send_id.as_str())
        .one(d.db.read())
        .await?
    else {
        return Ok(());
    };
    if send.cancelled {
        return finish(d, &messages, None, |_| Outcome::Cancelled).await;
    }
    // A device unregistered (or found gone by a receipt) after the send was
    // created stops receiving it: checked as the batch goes out.
    let active = active_tokens(&d.db, &messages).await?;
    let going: Vec<usize> = (0..messages.len())
        .filter(|&i| active.contains(&messages[i].push_token))
        .collect();
    if going.is_empty() {
        return finish(d, &messages, None, |_| Outcome::Skipped).await;
    }
    let data: Option<Value> = send
        .data
        .as_deref()
        .and_then(|d| serde_json::from_str(d).ok());
    let out: Vec<Message> = going
        .iter()
        .map(|&i| Message {
            to: messages[i].push_token.clone(),
            title: send.title.clone(),
            body: send.body.clone(),
            data: data.clone(),
            sound: "default",
            priority: "high",
        })
        .collect();
    // Message index → its place in the request (None: skipped).
    let mut place = vec![None; messages.len()];
    for (k, &i) in going.iter().enumerate() {
        place[i] = Some(k);
    }
    let answer = match d.expo.turn(out.len()).await {
        Ok(turn) => {
            // The last look, in the turn: a cancel made while the batch
            // waited for it stops the batch.
            if cancelled(&d.db, &job.send_id).await? {
                drop(turn);
                return finish(d, &messages, None, |_| Outcome::Cancelled).await;
            }
            d.expo.send(turn, &out).await
        }
        Err(failure) => Err(failure),
    };
    match answer {
        Ok(tickets) => {
            let now = Utc::now();
            let receipts = (job.send_id.as_str(), receipts_at(d, now));
            finish(d, &messages, Some(receipts), |i| match place[i] {
                Some(k) => Outcome::Ticket(tickets.get(k).cloned(), now),
                None => Outcome::Skipped,
            })
            .await
        }
        Err(failure) => failed(d, job, &ctx, &messages, &place, failure).await,
    }
}

/// A batch Expo did not take: refused for good (stored as such), or tried
/// again later unless this was its last attempt.
async fn failed(
    d: &Delivery,
    job: &SendBatch,
    ctx: &JobContext,
    messages: &[push_message::Model],
    place: &[Option<usize>],
    failure: Failure,
) -> Result<(), JobError> {
    let refused = |reason: String| {
        move |i: usize| match place[i] {
            Some(_) => Outcome::Refused(reason.clone()),
            None => Outcome::Skipped,
        }
    };
    match failure {
        Failure::Rejected { reason } => {
            tracing::warn!(batch = %job.batch_id, %reason, "Expo refused a batch; not retrying");
            finish(d, messages, None, refused(reason)).await
        }
        Failure::Retry { reason, .. } if ctx.is_last_attempt() => {
            tracing::error!(batch = %job.batch_id, %reason, "a batch failed on every attempt");
            finish(
                d,
                messages,
                None,
                refused(format!("RETRIES_EXHAUSTED: {reason}")),
            )
            .await
        }
        Failure::Retry { reason, after } => Err(match after {
            Some(after) => JobError::retry_after(reason, after),
            None => JobError::retry(reason),
        }),
    }
}

/// Whether the send has been cancelled since the batch was read.
async fn cancelled(db: &Db, send_id: &str) -> Result<bool, JobError> {
    let flag: Option<bool> = push_send::Entity::find_by_id(send_id)
        .select_only()
        .column(push_send::Column::Cancelled)
        .into_tuple()
        .one(db.read())
        .await?;
    Ok(flag.unwrap_or(true))
}

/// When the receipts of tickets got at `sent` are asked for: after the
/// delay, rounded up to the minute (to the second for delays under a
/// minute), so one request serves every batch of that minute.
fn receipts_at(d: &Delivery, sent: DateTime<Utc>) -> DateTime<Utc> {
    let delay = d.delay();
    round_up(sent + delay, delay)
}

/// Which of the messages' devices are active now. Looked up by key only:
/// with `active = true` in the query, SQLite's planner preferred the
/// (active, device_type) index and walked every active device for each
/// batch (24 ms a batch at 100,000 devices, the push path's largest cost),
/// so the flag is read and checked here instead.
async fn active_tokens(
    db: &Db,
    messages: &[push_message::Model],
) -> Result<HashSet<String>, JobError> {
    let devices: Vec<(String, bool)> = push_device::Entity::find()
        .select_only()
        .column(push_device::Column::PushToken)
        .column(push_device::Column::Active)
        .filter(
            push_device::Column::PushToken.is_in(messages.iter().map(|m| m.push_token.as_str())),
        )
        .into_tuple()
        .all(db.read())
        .await?;
    Ok(devices
        .into_iter()
        .filter_map(|(token, active)| active.then_some(token))
        .collect())
}

/// The stored form of one message's outcome.
fn row_of(m: &push_message::Model, outcome: Outcome, gone: &mut Vec<String>) -> Written {
    let mut row = Written {
        push_token: m.push_token.clone(),
        status: MessageStatus::Error,
        ticket_id: None,
        ticket_error: None,
        sent_at: None,
    };
    match outcome {
        Outcome::Ticket(Some(t), at) if t.status == "ok" => {
            row.status = MessageStatus::Sent;
            row.ticket_id = t.id;
            row.sent_at = Some(at);
        }
        Outcome::Ticket(t, at) => {
            let code = t
                .as_ref()
                .and_then(|t| t.details.as_ref().and_then(|d| d.error.clone()))
                .unwrap_or_else(|| "UNKNOWN_ERROR".to_owned());
            if code == DEVICE_NOT_REGISTERED {
                gone.push(m.push_token.clone());
            }
            row.ticket_error = Some(code);
            row.sent_at = Some(at);
        }
        Outcome::Refused(reason) => row.ticket_error = Some(reason.chars().take(64).collect()),
        Outcome::Cancelled => row.status = MessageStatus::Cancelled,
        Outcome::Skipped => row.status = MessageStatus::Skipped,
    }
    row
}

/// Stores every message's outcome in one statement, deactivates devices
/// Expo no longer knows, and, for an accepted batch, enqueues the receipts
/// job of its send and minute in the same transaction: one job serves
/// every batch whose receipts fall due in that minute (a send to 1,000,000
/// devices at full speed makes one or two, not 10,000). A batch whose
/// minute has a job already is covered by it: the job runs after the
/// minute's batches were sent, and one that finds a batch of its send
/// still on its way asks again (see receipts).
async fn finish(
    d: &Delivery,
    messages: &[push_message::Model],
    receipts: Option<(&str, DateTime<Utc>)>,
    outcome: impl Fn(usize) -> Outcome,
) -> Result<(), JobError> {
    let mut gone = Vec::new();
    let rows: Vec<Written> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| row_of(m, outcome(i), &mut gone))
        .collect();
    let send_id = messages.first().map_or("", |m| m.send_id.as_str());
    let txn = d.db.begin_write().await?;
    let delta = counted(&txn, send_id, &rows).await?;
    outcome::write(&txn, send_id, &rows).await?;
    deactivate(&txn, &gone).await?;
    if let Some((send_id, at)) = receipts {
        let job = Receipts {
            send_id: send_id.to_owned(),
        };
        jobs::enqueue_unique(&txn, &job, &super::receipts::key(send_id, at), at).await?;
    }
    // Last: the send's row is locked from here to the commit, and every
    // batch of the send in flight writes it.
    delta.apply(&txn, send_id).await?;
    txn.commit().await?;
    super::counters::messages(&rows);
    Ok(())
}

/// How the send's counts move from what the messages are now to their
/// outcomes (a message cancelled while its batch was on its way becomes
/// what Expo answered).
async fn counted<C: ConnectionTrait>(
    txn: &C,
    send_id: &str,
    rows: &[Written],
) -> Result<Delta, JobError> {
    let tokens: Vec<&str> = rows.iter().map(|r| r.push_token.as_str()).collect();
    let now: HashMap<String, MessageStatus> = counts::statuses(txn, send_id, &tokens)
        .await?
        .into_iter()
        .collect();
    let mut delta = Delta::default();
    for r in rows {
        if let Some(from) = now.get(&r.push_token) {
            delta.moved(*from, r.status, 1);
        }
    }
    Ok(delta)
}
