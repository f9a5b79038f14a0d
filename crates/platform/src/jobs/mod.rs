//! Durable background jobs in the application database (`keel_jobs`).
//!
//! A job is enqueued with the same connection or transaction as the change
//! that causes it, so it exists exactly when that change commits. Workers
//! claim due jobs with a lease (`FOR UPDATE SKIP LOCKED` on PostgreSQL; the
//! single writer on SQLite), run them, delete them on success and reschedule
//! them with exponential backoff on failure. A job whose worker died is
//! claimed again when its lease runs out.

pub mod cron;
pub mod entity;
pub mod failed;
pub mod gauges;
mod worker;

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, DbErr, EntityTrait, Set};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use worker::Worker;

/// A kind of background work with serializable arguments.
pub trait Job: Serialize + DeserializeOwned + Send + 'static {
    /// Unique name, stored with each job.
    const KIND: &'static str;
    /// Attempts before the job is marked failed.
    const MAX_ATTEMPTS: u32 = 12;
    /// Its payload names someone whose account is gone (the mail saying it
    /// was deleted): when it ends, done or given up, its row is deleted
    /// (a failure is logged, not kept) and the freed pages are erased from
    /// disk ([`Db::erase_freed`](crate::db::Db::erase_freed)).
    const ERASE: bool = false;
}

/// How a job run ended when it did not succeed, with its cause: the log
/// and the job's row show the cause's whole source chain.
#[derive(Debug)]
pub enum JobError {
    /// Try again later; `after` overrides the backoff (e.g. a Retry-After).
    Retry {
        cause: crate::failure::Cause,
        after: Option<Duration>,
    },
    /// Do not try again.
    Fail(crate::failure::Cause),
}

impl JobError {
    /// Try again later, because of `cause` (an error, or a sentence).
    pub fn retry(cause: impl Into<crate::failure::Cause>) -> Self {
        Self::Retry {
            cause: cause.into(),
            after: None,
        }
    }

    pub fn retry_after(cause: impl Into<crate::failure::Cause>, after: Duration) -> Self {
        Self::Retry {
            cause: cause.into(),
            after: Some(after),
        }
    }

    pub fn fail(cause: impl Into<crate::failure::Cause>) -> Self {
        Self::Fail(cause.into())
    }

    /// The cause with its whole source chain, as the log and the job's
    /// row say it.
    pub fn reason(&self) -> String {
        let (Self::Retry { cause, .. } | Self::Fail(cause)) = self;
        crate::failure::chain(cause.as_ref())
    }
}

impl From<DbErr> for JobError {
    fn from(e: DbErr) -> Self {
        Self::retry(e)
    }
}

/// What a handler knows about the run.
#[derive(Debug, Clone, Copy)]
pub struct JobContext {
    pub id: i64,
    /// 1 on the first run.
    pub attempt: u32,
    pub max_attempts: u32,
}

impl JobContext {
    pub fn is_last_attempt(&self) -> bool {
        self.attempt >= self.max_attempts
    }
}

type Handler = Arc<
    dyn Fn(serde_json::Value, JobContext) -> BoxFuture<'static, Result<(), JobError>> + Send + Sync,
>;

/// A kind's handler and whether its row is erased when it ends.
#[derive(Clone)]
struct Registered {
    handler: Handler,
    erase: bool,
}

/// The handlers this process runs, by job kind.
#[derive(Default, Clone)]
pub struct JobRegistry {
    handlers: HashMap<&'static str, Registered>,
    /// Kinds registered more than once (a mistake the start refuses).
    twice: Vec<&'static str>,
}

impl JobRegistry {
    pub fn register<J, F, Fut>(&mut self, handler: F)
    where
        J: Job,
        F: Fn(J, JobContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), JobError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let run: Handler = Arc::new(move |payload, ctx| {
            let handler = handler.clone();
            Box::pin(async move {
                let job: J = serde_json::from_value(payload)
                    .map_err(|e| JobError::fail(format!("bad payload for {}: {e}", J::KIND)))?;
                handler(job, ctx).await
            })
        });
        let earlier = self.handlers.insert(
            J::KIND,
            Registered {
                handler: run,
                erase: J::ERASE,
            },
        );
        if earlier.is_some() {
            self.twice.push(J::KIND);
        }
    }

    /// The first kind registered more than once, if any: two handlers
    /// for one kind would leave one never run.
    pub fn registered_twice(&self) -> Option<&'static str> {
        self.twice.first().copied()
    }

    pub fn kinds(&self) -> Vec<&'static str> {
        let mut kinds: Vec<_> = self.handlers.keys().copied().collect();
        kinds.sort_unstable();
        kinds
    }

    fn get(&self, kind: &str) -> Option<Handler> {
        self.handlers.get(kind).map(|r| r.handler.clone())
    }

    /// Whether jobs of `kind` are erased when they end (see [`Job::ERASE`]).
    fn erases(&self, kind: &str) -> bool {
        self.handlers.get(kind).is_some_and(|r| r.erase)
    }
}

/// Enqueues `job` to run now.
pub async fn enqueue<C: ConnectionTrait, J: Job>(conn: &C, job: &J) -> Result<(), DbErr> {
    insert(conn, job, Utc::now(), None).await.map(|_| ())
}

/// Enqueues `job` to run at `run_at`.
pub async fn enqueue_at<C: ConnectionTrait, J: Job>(
    conn: &C,
    job: &J,
    run_at: DateTime<Utc>,
) -> Result<(), DbErr> {
    insert(conn, job, run_at, None).await.map(|_| ())
}

/// Enqueues `job` unless a job with `key` already exists; true if inserted.
pub async fn enqueue_unique<C: ConnectionTrait, J: Job>(
    conn: &C,
    job: &J,
    key: &str,
    run_at: DateTime<Utc>,
) -> Result<bool, DbErr> {
    insert(conn, job, run_at, Some(key)).await
}

/// Enqueues each `(job, key)` unless a job with its key exists, in
/// statements of up to 200 rows; how many were inserted.
pub async fn enqueue_unique_many<C: ConnectionTrait, J: Job>(
    conn: &C,
    jobs: &[(J, String)],
    run_at: DateTime<Utc>,
) -> Result<u64, DbErr> {
    let now = Utc::now();
    let mut inserted = 0;
    for chunk in jobs.chunks(200) {
        let rows = chunk
            .iter()
            .map(|(job, key)| row(job, Some(key.as_str()), run_at, now))
            .collect::<Result<Vec<_>, DbErr>>()?;
        inserted += insert_rows(conn, rows).await?;
    }
    Ok(inserted)
}

/// A queued job's row.
fn row<J: Job>(
    job: &J,
    unique_key: Option<&str>,
    run_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<entity::ActiveModel, DbErr> {
    Ok(entity::ActiveModel {
        kind: Set(J::KIND.to_owned()),
        payload: Set(serde_json::to_string(job).map_err(|e| DbErr::Json(e.to_string()))?),
        unique_key: Set(unique_key.map(str::to_owned)),
        status: Set(entity::QUEUED.to_owned()),
        attempts: Set(0),
        max_attempts: Set(i32::try_from(J::MAX_ATTEMPTS).unwrap_or(i32::MAX)),
        run_at: Set(run_at),
        locked_until: Set(None),
        locked_by: Set(None),
        last_error: Set(None),
        created_at: Set(now),
        trace_parent: Set(crate::observe::trace::current_traceparent()),
        ..Default::default()
    })
}

async fn insert<C: ConnectionTrait, J: Job>(
    conn: &C,
    job: &J,
    run_at: DateTime<Utc>,
    unique_key: Option<&str>,
) -> Result<bool, DbErr> {
    let row = row(job, unique_key, run_at, Utc::now())?;
    Ok(insert_rows(conn, vec![row]).await? > 0)
}

/// Inserts job rows, skipping any whose unique key exists (a row without a
/// key never conflicts); how many were inserted.
async fn insert_rows<C: ConnectionTrait>(
    conn: &C,
    rows: Vec<entity::ActiveModel>,
) -> Result<u64, DbErr> {
    if rows.is_empty() {
        return Ok(0);
    }
    entity::Entity::insert_many(rows)
        .on_conflict(
            OnConflict::column(entity::Column::UniqueKey)
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(conn)
        .await
}

/// Jobs due now or running (claimed, lease not expired): 0 when the queue
/// has nothing to do until some later `run_at`. Tests wait on this instead
/// of sleeping.
pub async fn busy(db: &crate::db::Db) -> Result<u64, DbErr> {
    use sea_orm::{ColumnTrait, Condition, PaginatorTrait, QueryFilter};
    let now = Utc::now();
    entity::Entity::find()
        .filter(entity::Column::Status.eq(entity::QUEUED))
        .filter(
            Condition::any()
                .add(entity::Column::RunAt.lte(now))
                .add(entity::Column::LockedUntil.gt(now)),
        )
        .count(db.read())
        .await
}

/// Jobs waiting to run, now or later (not those that failed for good).
pub async fn queued(db: &crate::db::Db) -> Result<u64, DbErr> {
    use sea_orm::{ColumnTrait, PaginatorTrait, QueryFilter};
    entity::Entity::find()
        .filter(entity::Column::Status.eq(entity::QUEUED))
        .count(db.read())
        .await
}

/// Exponential backoff: `base * 2^(attempt-1)`, at most one hour.
pub fn backoff(base: Duration, attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(20));
    base.saturating_mul(factor).min(Duration::from_secs(3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let base = Duration::from_secs(1);
        assert_eq!(backoff(base, 1), Duration::from_secs(1));
        assert_eq!(backoff(base, 4), Duration::from_secs(8));
        assert_eq!(backoff(base, 40), Duration::from_secs(3600));
    }
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[derive(Serialize, serde::Deserialize)]
    struct Ping;

    impl Job for Ping {
        const KIND: &'static str = "test.ping";
    }

    #[test]
    fn a_kind_registered_twice_is_reported() {
        let mut r = JobRegistry::default();
        r.register(|_: Ping, _| async { Ok(()) });
        assert_eq!(r.registered_twice(), None);
        r.register(|_: Ping, _| async { Ok(()) });
        assert_eq!(r.registered_twice(), Some("test.ping"));
    }
}
