//! The dispatch job: batches every due message of a send (at most 100 a
//! batch, each with its send-batch job in the same transaction), and
//! schedules itself again for messages due later (local-time sends).

use chrono::{DateTime, Utc};
use keel_platform::jobs::{self, Job, JobContext, JobError, JobRegistry};
use keel_platform::sea_orm::sea_query::{Expr, Func};
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use serde::{Deserialize, Serialize};

use super::Delivery;
use super::send_batch::SendBatch;
use crate::domain::push::counts::Delta;
use crate::entity::push_message::{self, MessageStatus};
use crate::entity::push_send;
use crate::expo::MAX_MESSAGES;

/// A send with at least this many recipients has PostgreSQL refresh the
/// messages table's statistics before batching: right after a bulk insert
/// they still describe a small table, and the planner then batches by
/// scanning every pending message of the send instead of using the key.
const ANALYZE_FROM_RECIPIENTS: i64 = 1000;

#[derive(Debug, Serialize, Deserialize)]
pub struct Dispatch {
    pub send_id: String,
}

impl Job for Dispatch {
    const KIND: &'static str = "svc.push.dispatch";
}

pub fn register(registry: &mut JobRegistry, d: Delivery) {
    registry.register(move |job: Dispatch, _ctx: JobContext| {
        let d = d.clone();
        async move { run(&d, &job.send_id).await }
    });
}

/// Schedules the send's dispatch at `at` (once per send and moment).
pub async fn schedule<C: ConnectionTrait>(
    conn: &C,
    send_id: &str,
    at: DateTime<Utc>,
) -> Result<(), DbErr> {
    let key = format!("dispatch:{send_id}:{}", at.timestamp());
    let job = Dispatch {
        send_id: send_id.to_owned(),
    };
    jobs::enqueue_unique(conn, &job, &key, at).await?;
    Ok(())
}

/// When the send's first pending message is due.
pub async fn earliest_pending<C: ConnectionTrait>(
    conn: &C,
    send_id: &str,
) -> Result<Option<DateTime<Utc>>, DbErr> {
    let row: Option<Option<DateTime<Utc>>> = push_message::Entity::find()
        .select_only()
        .expr_as(Func::min(Expr::col(push_message::Column::DueAt)), "first")
        .filter(push_message::Column::SendId.eq(send_id))
        .filter(push_message::Column::Status.eq(MessageStatus::Pending))
        .into_tuple()
        .one(conn)
        .await?;
    Ok(row.flatten())
}

/// The SQL that numbers a send's messages into batches of [`MAX_MESSAGES`]
/// by push token, as an `INSERT ... SELECT` column: `<send id>:<n>`, `n`
/// from 0. The send id is a UUID keel made, so it is written into the SQL.
pub fn batch_id_sql(send_id: &str) -> String {
    format!("'{send_id}:' || ((ROW_NUMBER() OVER (ORDER BY \"push_token\") - 1) / {MAX_MESSAGES})")
}

/// Enqueues the send-batch job of every batch of a send whose `recipients`
/// messages were written batched by [`batch_id_sql`] (a send due at once:
/// see `send::create`), in the caller's transaction. The batch ids follow
/// from the count: nothing is read back.
pub async fn enqueue_batches<C: ConnectionTrait>(
    conn: &C,
    send_id: &str,
    recipients: u64,
    at: DateTime<Utc>,
) -> Result<(), DbErr> {
    let batches = recipients.div_ceil(u64::try_from(MAX_MESSAGES).unwrap_or(100));
    let jobs: Vec<(SendBatch, String)> = (0..batches)
        .map(|n| format!("{send_id}:{n}"))
        .map(|batch_id| {
            let key = format!("batch:{batch_id}");
            let job = SendBatch {
                send_id: send_id.to_owned(),
                batch_id,
            };
            (job, key)
        })
        .collect();
    jobs::enqueue_unique_many(conn, &jobs, at).await?;
    Ok(())
}

/// On PostgreSQL, after a bulk insert of at least
/// [`ANALYZE_FROM_RECIPIENTS`] messages, refreshes the table's statistics.
pub async fn refresh_statistics(db: &keel_platform::db::Db, recipients: i64) -> Result<(), DbErr> {
    if db.is_postgres() && recipients >= ANALYZE_FROM_RECIPIENTS {
        db.write()
            .execute_unprepared("ANALYZE svc_push_messages")
            .await?;
    }
    Ok(())
}

async fn run(d: &Delivery, send_id: &str) -> Result<(), JobError> {
    let Some(send) = push_send::Entity::find_by_id(send_id)
        .one(d.db.read())
        .await?
    else {
        return Ok(());
    };
    if send.cancelled {
        return Ok(());
    }
    refresh_statistics(&d.db, send.recipients).await?;
    while batch_due(d, send_id).await? {}
    if let Some(next) = earliest_pending(d.db.read(), send_id).await? {
        schedule(d.db.write(), send_id, next).await?;
    }
    Ok(())
}

/// Batches up to 20 batches' worth of due messages; false when none was due.
async fn batch_due(d: &Delivery, send_id: &str) -> Result<bool, JobError> {
    let now = Utc::now();
    let due: Vec<String> = push_message::Entity::find()
        .select_only()
        .column(push_message::Column::PushToken)
        .filter(push_message::Column::SendId.eq(send_id))
        .filter(push_message::Column::Status.eq(MessageStatus::Pending))
        .filter(push_message::Column::DueAt.lte(now))
        // The index's own order: the query stops after the limit instead
        // of sorting every pending message of the send each round.
        .order_by_asc(push_message::Column::DueAt)
        .limit(u64::try_from(MAX_MESSAGES * 20).unwrap_or(2000))
        .into_tuple()
        .all(d.db.read())
        .await?;
    if due.is_empty() {
        return Ok(false);
    }
    let txn = d.db.begin_write().await?;
    let mut delta = Delta::default();
    for chunk in due.chunks(MAX_MESSAGES) {
        let batch_id = uuid::Uuid::new_v4().to_string();
        let batched = push_message::Entity::update_many()
            .col_expr(
                push_message::Column::Status,
                Expr::value(MessageStatus::Batched),
            )
            .col_expr(
                push_message::Column::BatchId,
                Expr::value(batch_id.as_str()),
            )
            .filter(push_message::Column::SendId.eq(send_id))
            .filter(push_message::Column::PushToken.is_in(chunk.iter().map(String::as_str)))
            .filter(push_message::Column::Status.eq(MessageStatus::Pending))
            .exec(&txn)
            .await?
            .rows_affected;
        delta.moved(MessageStatus::Pending, MessageStatus::Batched, batched);
        let job = SendBatch {
            send_id: send_id.to_owned(),
            batch_id: batch_id.clone(),
        };
        jobs::enqueue_unique(&txn, &job, &format!("batch:{batch_id}"), now).await?;
    }
    delta.apply(&txn, send_id).await?;
    txn.commit().await?;
    d.wake_worker();
    Ok(true)
}
