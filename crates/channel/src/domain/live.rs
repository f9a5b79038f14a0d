//! The live state: set when the provider reports the stream live, cleared
//! when it ends, and `stream.isLive` served from a snapshot every node
//! keeps at most half a second old.
//!
//! Transitions are conditional updates of the one channel row in the
//! caller's transaction, so a redelivered event, or the same event at two
//! nodes, changes the state (and opens a session, and enqueues its
//! notification) exactly once.
//!
//! The database is the only place the state lives: every node reads it
//! there when its snapshot is stale (two reads a second at most), so all
//! nodes agree with the database within half a second whatever happened to
//! a cache, and a change made on this node is put in its snapshot at once.
//! While the database cannot be read, the last status read is answered
//! for up to [`STALE_IF_ERROR`].

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::{Expr, SimpleExpr};
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseTransaction, DbErr, EntityTrait, ExprTrait, QueryFilter,
    Set,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::snapshot::Snapshot;
use crate::entity::{channel_config, stream_session};
use crate::jobs::live_notify;

/// What `stream.isLive` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LiveStatus {
    pub is_live: bool,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub live_started_at: Option<DateTime<Utc>>,
    pub viewer_count: i64,
}

impl LiveStatus {
    fn of(c: &channel_config::Model) -> Self {
        Self {
            is_live: c.live_started_at.is_some(),
            live_started_at: c.live_started_at,
            viewer_count: if c.live_started_at.is_some() {
                c.viewer_count
            } else {
                0
            },
        }
    }
}

/// How old a node's snapshot may get.
const MAX_AGE: Duration = Duration::from_millis(500);
/// How long the last status read is answered while the database cannot be
/// read.
pub const STALE_IF_ERROR: Duration = Duration::from_secs(30);

/// This node's view of the live status.
pub struct Live {
    db: Db,
    snapshot: Snapshot<LiveStatus>,
}

impl Live {
    pub fn new(db: Db) -> Self {
        Self {
            db,
            snapshot: Snapshot::new(MAX_AGE),
        }
    }

    /// The status, at most half a second old. One request refreshes a
    /// stale snapshot; the others meanwhile answer from it.
    pub async fn status(&self) -> Result<Arc<LiveStatus>, DbErr> {
        match self.snapshot.get(|| self.load()).await {
            Ok(status) => Ok(status),
            Err(e) => match self.snapshot.within(STALE_IF_ERROR) {
                Some(last) => {
                    tracing::warn!(error = %e, "the live status cannot be read; answering the last one read");
                    Ok(last)
                }
                None => Err(e),
            },
        }
    }

    async fn load(&self) -> Result<LiveStatus, DbErr> {
        Ok(LiveStatus::of(&super::channel::config(&self.db).await?))
    }

    /// Reads the status after a change made on this node, so this node
    /// answers it at once. If that read fails, the snapshot is dropped and
    /// the next request reads it.
    pub async fn publish(&self) {
        match self.load().await {
            Ok(status) => {
                self.snapshot.put(status);
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not read the live status after a change");
                self.snapshot.invalidate();
            }
        }
    }
}

/// A live start: the session opened for it, or `None` when the stream was
/// live already (a redelivery, another node first).
pub async fn start(
    txn: &DatabaseTransaction,
    call_cid: &str,
    at: DateTime<Utc>,
    viewers: i64,
    notify_at: DateTime<Utc>,
) -> Result<Option<String>, DbErr> {
    let session_id = uuid::Uuid::now_v7().to_string();
    let res = channel_config::Entity::update_many()
        .col_expr(channel_config::Column::LiveStartedAt, Expr::value(at))
        .col_expr(
            channel_config::Column::LiveSessionId,
            Expr::value(session_id.as_str()),
        )
        .col_expr(channel_config::Column::ViewerCount, Expr::value(viewers))
        .col_expr(channel_config::Column::UpdatedAt, Expr::value(Utc::now()))
        .filter(channel_config::Column::Id.eq(channel_config::ID))
        .filter(channel_config::Column::LiveStartedAt.is_null())
        .exec(txn)
        .await?;
    if res.rows_affected == 0 {
        return Ok(None);
    }
    stream_session::Entity::insert(stream_session::ActiveModel {
        id: Set(session_id.clone()),
        call_cid: Set(call_cid.to_owned()),
        started_at: Set(at),
        ended_at: Set(None),
        peak_viewers: Set(viewers),
        notified_at: Set(None),
    })
    .exec_without_returning(txn)
    .await?;
    live_notify::enqueue(txn, &session_id, notify_at).await?;
    Ok(Some(session_id))
}

/// Ends the live stream now, in a transaction of its own (the owner's
/// `stream.end`).
pub async fn end_now(db: &Db) -> Result<Option<String>, DbErr> {
    let txn = db.begin_write().await?;
    let ended = end(&txn, Utc::now()).await?;
    txn.commit().await?;
    Ok(ended)
}

/// The end of the live stream: closes the open session (its end and peak)
/// and clears the live state; `None` when it was not live.
pub async fn end(txn: &DatabaseTransaction, at: DateTime<Utc>) -> Result<Option<String>, DbErr> {
    let c = channel_config::Entity::find_by_id(channel_config::ID)
        .one(txn)
        .await?;
    let Some(session_id) = c.as_ref().and_then(|c| c.live_session_id.clone()) else {
        return Ok(None);
    };
    let last = c.map_or(0, |c| c.viewer_count);
    stream_session::Entity::update_many()
        .col_expr(stream_session::Column::EndedAt, Expr::value(at))
        .col_expr(stream_session::Column::PeakViewers, peak_at_least(last))
        .filter(stream_session::Column::Id.eq(session_id.as_str()))
        .filter(stream_session::Column::EndedAt.is_null())
        .exec(txn)
        .await?;
    let res = channel_config::Entity::update_many()
        .col_expr(
            channel_config::Column::LiveStartedAt,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(
            channel_config::Column::LiveSessionId,
            Expr::value(Option::<String>::None),
        )
        .col_expr(channel_config::Column::ViewerCount, Expr::value(0i64))
        .col_expr(channel_config::Column::UpdatedAt, Expr::value(Utc::now()))
        .filter(channel_config::Column::Id.eq(channel_config::ID))
        .filter(channel_config::Column::LiveSessionId.eq(session_id.as_str()))
        .exec(txn)
        .await?;
    Ok((res.rows_affected > 0).then_some(session_id))
}

/// The provider's viewer count of the live session now: kept as the
/// current count and the session's peak.
pub async fn set_viewers<C: ConnectionTrait>(
    conn: &C,
    session_id: &str,
    viewers: i64,
) -> Result<(), DbErr> {
    channel_config::Entity::update_many()
        .col_expr(channel_config::Column::ViewerCount, Expr::value(viewers))
        .filter(channel_config::Column::Id.eq(channel_config::ID))
        .filter(channel_config::Column::LiveSessionId.eq(session_id))
        .exec(conn)
        .await?;
    stream_session::Entity::update_many()
        .col_expr(stream_session::Column::PeakViewers, peak_at_least(viewers))
        .filter(stream_session::Column::Id.eq(session_id))
        .exec(conn)
        .await?;
    Ok(())
}

/// `peak_viewers`, raised to `n` if lower (portable: no GREATEST on
/// SQLite, no two-argument MAX on PostgreSQL).
fn peak_at_least(n: i64) -> SimpleExpr {
    let peak = Expr::col(stream_session::Column::PeakViewers);
    Expr::case(peak.clone().lt(n), Expr::value(n))
        .finally(peak)
        .into()
}
