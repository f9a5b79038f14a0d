//! The job queue as Prometheus gauges, read from `keel_jobs` when
//! `/metrics` is scraped (so every node reports the whole queue, which is
//! shared): per kind, how many jobs are queued, due and waiting for a
//! worker, running, failed for good, and how long the oldest due job has
//! waited. The mail outbox is the `platform.mail` kinds; a push send's
//! batches and receipts are the `svc.push.*` kinds.
//!
//! Labels are bounded: a kind is a name in the code (plus any kind found in
//! the table, which only keel writes).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use sea_orm::ExprTrait;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, Condition, DbErr, EntityTrait, QueryFilter, QuerySelect};

use super::entity::{self, Column, Entity};
use crate::db::Db;

/// One kind's figures.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct KindFigures {
    /// Queued, whether due or scheduled later, running or not.
    pub queued: u64,
    /// Due and not held by a worker: waiting for one.
    pub due: u64,
    /// Held by a worker (its lease has not run out).
    pub running: u64,
    /// Gave up (attempts spent, or refused for good); kept for inspection.
    pub failed: u64,
    /// Seconds the oldest due job has waited past its time (0: none).
    pub oldest_due_secs: f64,
}

/// Reads the queue's figures for `kinds` and every kind in the table.
pub async fn read(db: &Db, kinds: &[&str]) -> Result<BTreeMap<String, KindFigures>, DbErr> {
    let now = Utc::now();
    let mut out: BTreeMap<String, KindFigures> = kinds
        .iter()
        .map(|k| ((*k).to_owned(), KindFigures::default()))
        .collect();
    let by_status: Vec<(String, String, i64)> = Entity::find()
        .select_only()
        .column(Column::Kind)
        .column(Column::Status)
        .column_as(Expr::col(Column::Id).count(), "n")
        .group_by(Column::Kind)
        .group_by(Column::Status)
        .into_tuple()
        .all(db.read())
        .await?;
    for (kind, status, n) in by_status {
        let f = out.entry(kind).or_default();
        let n = u64::try_from(n).unwrap_or(0);
        match status.as_str() {
            entity::QUEUED => f.queued = n,
            entity::FAILED => f.failed = n,
            _ => {}
        }
    }
    let running = count_by_kind(db, Column::LockedUntil.gt(now)).await?;
    for (kind, n) in running {
        out.entry(kind).or_default().running = n;
    }
    let waiting = Condition::all()
        .add(Column::Status.eq(entity::QUEUED))
        .add(Column::RunAt.lte(now))
        .add(
            Condition::any()
                .add(Column::LockedUntil.is_null())
                .add(Column::LockedUntil.lte(now)),
        );
    // Due jobs per kind, with the oldest one's time, in one aggregate.
    let due: Vec<(String, i64, DateTime<Utc>)> = Entity::find()
        .select_only()
        .column(Column::Kind)
        .column_as(Expr::col(Column::Id).count(), "n")
        .column_as(Expr::col(Column::RunAt).min(), "oldest")
        .filter(waiting)
        .group_by(Column::Kind)
        .into_tuple()
        .all(db.read())
        .await?;
    for (kind, n, oldest) in due {
        let f = out.entry(kind).or_default();
        f.due = u64::try_from(n).unwrap_or(0);
        f.oldest_due_secs = (now - oldest).to_std().unwrap_or_default().as_secs_f64();
    }
    Ok(out)
}

async fn count_by_kind(
    db: &Db,
    filter: impl sea_orm::sea_query::IntoCondition,
) -> Result<Vec<(String, u64)>, DbErr> {
    let rows: Vec<(String, i64)> = Entity::find()
        .select_only()
        .column(Column::Kind)
        .column_as(Expr::col(Column::Id).count(), "n")
        .filter(filter)
        .group_by(Column::Kind)
        .into_tuple()
        .all(db.read())
        .await?;
    Ok(rows
        .into_iter()
        .map(|(k, n)| (k, u64::try_from(n).unwrap_or(0)))
        .collect())
}

/// Reads the figures and sets the gauges (a kind whose jobs are gone is
/// set to 0, not left at its last value).
pub async fn sample(db: &Db, kinds: &[&str]) -> Result<(), DbErr> {
    for (kind, f) in read(db, kinds).await? {
        let gauge = |name: &'static str, v: f64| {
            metrics::gauge!(name, "kind" => kind.clone()).set(v);
        };
        gauge("keel_jobs_queued", f.queued as f64);
        gauge("keel_jobs_due", f.due as f64);
        gauge("keel_jobs_running", f.running as f64);
        gauge("keel_jobs_failed", f.failed as f64);
        gauge("keel_jobs_oldest_due_age_seconds", f.oldest_due_secs);
    }
    Ok(())
}
