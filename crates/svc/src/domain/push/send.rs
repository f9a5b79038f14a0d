//! Sends: who gets a notification and when, cancelling.

use chrono::{DateTime, NaiveTime, Utc};
use keel_platform::db::Db;
use keel_platform::failure::Cause;
use keel_platform::sea_orm::sea_query::{Expr, Query};
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseTransaction, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde_json::Value;

use super::counts::Delta;
use super::idempotency::{self, Claimed, IdempotencyKey, Sender};
use super::progress::{self, Progress, SendStatus};
use super::request::{SendRequest, Target, next_local};
use crate::entity::push_message::{self, MessageStatus};
use crate::entity::{push_device, push_send};
use crate::jobs::dispatch;

/// Why a send could not be made or cancelled.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("No such send")]
    NotFound,
    #[error("{0}")]
    NotCancellable(&'static str),
    /// No active device matches the target: the send would reach no one
    /// (its recipients are chosen when it is made, scheduled or not).
    #[error("No active device matches this send's target: it would reach no one")]
    NoRecipients,
    /// The `Idempotency-Key` was used with another request within a day.
    #[error("This Idempotency-Key was used for a different request in the last 24 hours")]
    KeyReused,
    /// What keel wrote could not be read back or built.
    #[error("the send could not be written: {0}")]
    Broken(#[source] Cause),
    #[error(transparent)]
    Db(#[from] DbErr),
}

fn device_filter(target: &Target) -> keel_platform::sea_orm::Condition {
    use keel_platform::sea_orm::Condition;
    let mut c = Condition::all().add(push_device::Column::Active.eq(true));
    if let Some(t) = &target.device_type {
        c = c.add(push_device::Column::DeviceType.eq(t.as_str()));
    }
    if let Some(l) = &target.locale {
        c = c.add(push_device::Column::Locale.eq(l.as_str()));
    }
    if let Some(v) = &target.app_version {
        c = c.add(push_device::Column::AppVersion.eq(v.as_str()));
    }
    if let Some(tokens) = &target.push_tokens {
        c = c.add(push_device::Column::PushToken.is_in(tokens.iter().map(String::as_str)));
    }
    c
}

/// The send `id`, if there is one.
pub async fn find(db: &Db, id: &str) -> Result<Option<push_send::Model>, DbErr> {
    push_send::Entity::find_by_id(id).one(db.read()).await
}

/// How many devices a send with `target` would reach if it were made now.
pub async fn recipients(db: &Db, target: &Target) -> Result<u64, DbErr> {
    push_device::Entity::find()
        .filter(device_filter(target))
        .count(db.read())
        .await
}

/// A page of sends, newest first, and how many sends there are.
pub async fn page(
    db: &Db,
    page: u64,
    per_page: u64,
) -> Result<(Vec<push_send::Model>, u64), DbErr> {
    let total = push_send::Entity::find().count(db.read()).await?;
    let rows = push_send::Entity::find()
        .order_by_desc(push_send::Column::CreatedAt)
        .order_by_desc(push_send::Column::Id)
        .offset((page - 1) * per_page)
        .limit(per_page)
        .all(db.read())
        .await?;
    Ok((rows, total))
}

/// A send made, or the one an earlier request with the same
/// `Idempotency-Key` made; with the status its first answer gave.
pub struct Created {
    pub send: push_send::Model,
    pub status: SendStatus,
    pub replayed: bool,
}

/// Records the send and one message per recipient, and schedules its
/// dispatch, in one transaction. With `key` (the admin's
/// `Idempotency-Key`), a request made with it in the last day is answered
/// from what it made (see [`idempotency`]).
pub async fn create(
    db: &Db,
    req: SendRequest,
    sender: Sender,
    key: Option<&IdempotencyKey>,
) -> Result<Created, SendError> {
    let now = Utc::now();
    let send_at = req.send_at.filter(|t| *t > now).unwrap_or(now);
    let id = uuid::Uuid::now_v7().to_string();
    let txn = db.begin_write().await?;
    if let Some(key) = key {
        let print = idempotency::fingerprint(&req);
        match idempotency::claim(&txn, sender, key, &print, &id).await? {
            Claimed::Fresh => {}
            Claimed::Mismatch => return Err(SendError::KeyReused),
            Claimed::Replay { send_id, status } => {
                let send = push_send::Entity::find_by_id(send_id.as_str())
                    .one(&txn)
                    .await?
                    .ok_or(SendError::NotFound)?;
                return Ok(Created {
                    send,
                    status,
                    replayed: true,
                });
            }
        }
    }
    let send = push_send::ActiveModel {
        id: Set(id.clone()),
        title: Set(req.title),
        body: Set(req.body),
        data: Set(req.data.map(|d| Value::Object(d).to_string())),
        target: Set(serde_json::to_string(&req.target).map_err(|e| SendError::Broken(e.into()))?),
        send_at: Set(send_at),
        local_time: Set(req.local_time.map(|t| t.format("%H:%M").to_string())),
        recipients: Set(0),
        cancelled: Set(false),
        created_by: Set(sender.user_id()),
        created_at: Set(now),
        n_pending: Set(0),
        n_queued: Set(0),
        n_sent: Set(0),
        n_failed: Set(0),
        n_cancelled: Set(0),
        n_skipped: Set(0),
        n_receipts_ok: Set(0),
        n_receipts_error: Set(0),
    };
    push_send::Entity::insert(send)
        .exec_without_returning(&txn)
        .await?;
    // Due at once: the messages are written in their batches, each with its
    // job, so they go out without a pass that batches them.
    let at_once = req.local_time.is_none() && send_at <= now;
    let recipients = match req.local_time {
        None => add_recipients_at(&txn, &id, &req.target, send_at, at_once).await?,
        Some(at) => add_recipients_local(&txn, &id, &req.target, send_at, at).await?,
    };
    if recipients == 0 {
        // Dropping the transaction rolls back the send and the key's claim.
        return Err(SendError::NoRecipients);
    }
    let written = i64::try_from(recipients).unwrap_or(i64::MAX);
    let counted = if at_once {
        push_send::Column::NQueued
    } else {
        push_send::Column::NPending
    };
    push_send::Entity::update_many()
        .col_expr(push_send::Column::Recipients, Expr::value(written))
        .col_expr(counted, Expr::value(written))
        .filter(push_send::Column::Id.eq(id.as_str()))
        .exec(&txn)
        .await?;
    if at_once {
        dispatch::enqueue_batches(&txn, &id, recipients, now).await?;
    } else if let Some(first) = dispatch::earliest_pending(&txn, &id).await? {
        dispatch::schedule(&txn, &id, first).await?;
    }
    let saved = push_send::Entity::find_by_id(id.as_str())
        .one(&txn)
        .await?
        .ok_or_else(|| SendError::Broken("the send vanished after it was written".into()))?;
    // Just made: every recipient is pending (no need to count them).
    let fresh = Progress {
        pending: u64::try_from(saved.recipients).unwrap_or(0),
        ..Progress::default()
    };
    let status = progress::status_of(&saved, &fresh, now);
    if let Some(key) = key {
        idempotency::settle(&txn, sender, key, status).await?;
    }
    txn.commit().await?;
    if at_once {
        dispatch::refresh_statistics(db, saved.recipients).await?;
    }
    Ok(Created {
        send: saved,
        status,
        replayed: false,
    })
}

/// One `INSERT ... SELECT`: every matching device, due at `due`; with
/// `batched`, already in batches of at most 100 by push token (batch ids
/// `<send id>:<n>`).
async fn add_recipients_at(
    txn: &DatabaseTransaction,
    send_id: &str,
    target: &Target,
    due: DateTime<Utc>,
    batched: bool,
) -> Result<u64, SendError> {
    use push_device::Column as D;
    let mut select = Query::select()
        .expr(Expr::val(send_id))
        .column(D::PushToken)
        .expr(Expr::val(due))
        .to_owned();
    let mut columns = vec![
        push_message::Column::SendId,
        push_message::Column::PushToken,
        push_message::Column::DueAt,
        push_message::Column::Status,
    ];
    if batched {
        select
            .expr(Expr::val(MessageStatus::Batched))
            .expr(Expr::cust(dispatch::batch_id_sql(send_id)));
        columns.push(push_message::Column::BatchId);
    } else {
        select.expr(Expr::val(MessageStatus::Pending));
    }
    let select = select
        .from(push_device::Entity)
        .cond_where(device_filter(target))
        .to_owned();
    let insert = Query::insert()
        .into_table(push_message::Entity)
        .columns(columns)
        .select_from(select)
        .map_err(|e| SendError::Broken(e.into()))?
        .to_owned();
    Ok(txn.execute(&insert).await?.rows_affected())
}

/// Devices in pages; each message due at the local time of its device.
async fn add_recipients_local(
    txn: &DatabaseTransaction,
    send_id: &str,
    target: &Target,
    from: DateTime<Utc>,
    at: NaiveTime,
) -> Result<u64, DbErr> {
    let mut after = String::new();
    let mut total = 0u64;
    loop {
        let page: Vec<(String, Option<String>)> = push_device::Entity::find()
            .select_only()
            .column(push_device::Column::PushToken)
            .column(push_device::Column::Timezone)
            .filter(device_filter(target))
            .filter(push_device::Column::PushToken.gt(after.as_str()))
            .order_by_asc(push_device::Column::PushToken)
            .limit(500)
            .into_tuple()
            .all(txn)
            .await?;
        let Some(last) = page.last() else { break };
        after = last.0.clone();
        total += u64::try_from(page.len()).unwrap_or(0);
        let rows = page
            .into_iter()
            .map(|(token, tz)| push_message::ActiveModel {
                send_id: Set(send_id.to_owned()),
                due_at: Set(next_local(from, at, tz.as_deref())),
                push_token: Set(token),
                status: Set(MessageStatus::Pending),
                batch_id: Set(None),
                ticket_id: Set(None),
                ticket_error: Set(None),
                sent_at: Set(None),
                receipt_status: Set(None),
                receipt_error: Set(None),
            });
        push_message::Entity::insert_many(rows)
            .exec_without_returning(txn)
            .await?;
    }
    Ok(total)
}

/// Cancels what has not been handed to Expo yet; how many messages.
pub async fn cancel(db: &Db, send_id: &str) -> Result<u64, SendError> {
    let txn = db.begin_write().await?;
    let send = push_send::Entity::find_by_id(send_id)
        .one(&txn)
        .await?
        .ok_or(SendError::NotFound)?;
    if send.cancelled {
        return Err(SendError::NotCancellable("The send is already cancelled"));
    }
    // Pending, and batched but not yet gone out (a batch in flight
    // overwrites its messages with what Expo answered): one statement
    // each, so the counts know how many of each.
    let mut delta = Delta::default();
    let mut cancelled = 0;
    for from in [MessageStatus::Pending, MessageStatus::Batched] {
        let n = push_message::Entity::update_many()
            .col_expr(
                push_message::Column::Status,
                Expr::value(MessageStatus::Cancelled),
            )
            .filter(push_message::Column::SendId.eq(send_id))
            .filter(push_message::Column::Status.eq(from))
            .exec(&txn)
            .await?
            .rows_affected;
        delta.moved(from, MessageStatus::Cancelled, n);
        cancelled += n;
    }
    delta.apply(&txn, send_id).await?;
    if cancelled == 0 && send.recipients > 0 {
        return Err(SendError::NotCancellable(
            "Every message of this send has been handed over already",
        ));
    }
    push_send::Entity::update_many()
        .col_expr(push_send::Column::Cancelled, Expr::value(true))
        .filter(push_send::Column::Id.eq(send_id))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(cancelled)
}
