//! Viewer analytics: a sample of the live session's viewer count per
//! sampler tick, the session's peak, and a report of the current session,
//! the last 7 days and past sessions. Samples older than 7 days are pruned
//! (the documented retention).

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{
    ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde::Serialize;
use utoipa::ToSchema;

use crate::entity::{stream_session, viewer_sample};

/// How long analytics data is kept.
pub const RETENTION_DAYS: i64 = 7;
/// Past sessions the report lists.
pub const SESSIONS_LISTED: u64 = 20;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Sample {
    #[serde(with = "keel_platform::time::millis")]
    #[schema(value_type = String, format = DateTime)]
    pub at: DateTime<Utc>,
    pub viewers: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub id: String,
    #[serde(with = "keel_platform::time::millis")]
    #[schema(value_type = String, format = DateTime)]
    pub started_at: DateTime<Utc>,
    #[serde(with = "keel_platform::time::millis_opt")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub ended_at: Option<DateTime<Utc>>,
    pub peak_viewers: i64,
    /// Over the session's samples still kept; `null` without any.
    pub average_viewers: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CurrentSession {
    pub session: SessionSummary,
    pub samples: Vec<Sample>,
}

/// What `analytics.viewers` answers.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ViewerReport {
    /// The live session, `null` while offline.
    pub current: Option<CurrentSession>,
    /// Every sample of the last 7 days, oldest first.
    pub last_seven_days: Vec<Sample>,
    /// The latest sessions, newest first.
    pub sessions: Vec<SessionSummary>,
}

/// Stores one sample of `session_id` at `tick` (once per tick).
pub async fn record(
    db: &Db,
    session_id: &str,
    tick: DateTime<Utc>,
    viewers: i64,
) -> Result<(), DbErr> {
    let txn = db.begin_write().await?;
    viewer_sample::Entity::insert(viewer_sample::ActiveModel {
        session_id: Set(session_id.to_owned()),
        sampled_at: Set(tick),
        viewers: Set(viewers),
    })
    .on_conflict(
        OnConflict::columns([
            viewer_sample::Column::SessionId,
            viewer_sample::Column::SampledAt,
        ])
        .do_nothing()
        .to_owned(),
    )
    .exec_without_returning(&txn)
    .await?;
    super::live::set_viewers(&txn, session_id, viewers).await?;
    txn.commit().await?;
    Ok(())
}

/// Drops samples older than the retention.
pub async fn prune(db: &Db, now: DateTime<Utc>) -> Result<u64, DbErr> {
    let res = viewer_sample::Entity::delete_many()
        .filter(viewer_sample::Column::SampledAt.lt(now - Duration::days(RETENTION_DAYS)))
        .exec(db.write())
        .await?;
    Ok(res.rows_affected)
}

pub async fn report(
    db: &Db,
    live_session: Option<&str>,
    now: DateTime<Utc>,
) -> Result<ViewerReport, DbErr> {
    let samples = viewer_sample::Entity::find()
        .filter(viewer_sample::Column::SampledAt.gte(now - Duration::days(RETENTION_DAYS)))
        .order_by_asc(viewer_sample::Column::SampledAt)
        .all(db.read())
        .await?;
    let sessions = stream_session::Entity::find()
        .order_by_desc(stream_session::Column::StartedAt)
        .limit(SESSIONS_LISTED)
        .all(db.read())
        .await?;
    let mut by_session: HashMap<&str, Vec<&viewer_sample::Model>> = HashMap::new();
    for s in &samples {
        by_session.entry(s.session_id.as_str()).or_default().push(s);
    }
    let summary = |s: &stream_session::Model| {
        let mine = by_session.get(s.id.as_str());
        #[allow(clippy::cast_precision_loss)]
        let average = mine
            .filter(|m| !m.is_empty())
            .map(|m| m.iter().map(|x| x.viewers).sum::<i64>() as f64 / m.len() as f64);
        SessionSummary {
            id: s.id.clone(),
            started_at: s.started_at,
            ended_at: s.ended_at,
            peak_viewers: s.peak_viewers,
            average_viewers: average,
        }
    };
    let current = live_session
        .and_then(|id| sessions.iter().find(|s| s.id == id))
        .map(|s| CurrentSession {
            session: summary(s),
            samples: by_session
                .get(s.id.as_str())
                .map(|m| m.iter().map(|x| sample(x)).collect())
                .unwrap_or_default(),
        });
    Ok(ViewerReport {
        current,
        sessions: sessions.iter().map(summary).collect(),
        last_seven_days: samples.iter().map(sample).collect(),
    })
}

fn sample(x: &viewer_sample::Model) -> Sample {
    Sample {
        at: x.sampled_at,
        viewers: x.viewers,
    }
}
