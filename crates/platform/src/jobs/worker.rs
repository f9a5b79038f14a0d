//! The job runner: claims due jobs, runs their handlers, records outcomes.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use sea_orm::sea_query::{Expr, LockBehavior, LockType, Query};
use sea_orm::{ColumnTrait, DbErr, EntityTrait, ExprTrait, QueryFilter};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::entity::{self, Column, Entity};
use super::{JobContext, JobError, JobRegistry, backoff};
use crate::config::JobsConfig;
use crate::db::Db;
use crate::observe::trace;

/// Runs the jobs of the registered kinds until shut down.
#[derive(Clone)]
pub struct Worker {
    db: Db,
    registry: Arc<JobRegistry>,
    cfg: JobsConfig,
    id: String,
    wake: Arc<Notify>,
}

impl Worker {
    pub fn new(db: Db, registry: JobRegistry, cfg: JobsConfig) -> Self {
        Self {
            db,
            registry: Arc::new(registry),
            cfg,
            id: format!("{}-{}", std::process::id(), uuid::Uuid::new_v4().simple()),
            wake: Arc::new(Notify::new()),
        }
    }

    /// Wakes on `wake` too (the platform's, so a request that commits a
    /// job due now has it run at once).
    #[must_use]
    pub fn woken_by(mut self, wake: Arc<Notify>) -> Self {
        self.wake = wake;
        self
    }

    /// Wakes the worker now instead of at the next poll.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// A handle that wakes this worker.
    pub fn waker(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// Claims and runs jobs until `shutdown`; then waits up to `grace` for
    /// running jobs and releases the claims of any still unfinished.
    pub async fn run(self, shutdown: CancellationToken, grace: Duration) {
        if self.cfg.concurrency == 0 || self.registry.kinds().is_empty() {
            tracing::info!("no job worker in this process");
            shutdown.cancelled().await;
            return;
        }
        let slots = Arc::new(Semaphore::new(self.cfg.concurrency));
        let mut running: JoinSet<i64> = JoinSet::new();
        let kinds = self.registry.kinds();
        tracing::debug!(worker = %self.id, ?kinds, "job worker started");
        loop {
            let free = slots.available_permits();
            let claimed = if free > 0 {
                self.claim(&kinds, free).await.unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "claiming jobs failed");
                    Vec::new()
                })
            } else {
                Vec::new()
            };
            let full = !claimed.is_empty() && claimed.len() == free;
            for job in claimed {
                let Ok(permit) = slots.clone().acquire_owned().await else {
                    break;
                };
                let me = self.clone();
                running.spawn(async move {
                    let id = job.id;
                    me.run_one(job).await;
                    drop(permit);
                    id
                });
            }
            if full {
                continue;
            }
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep(self.cfg.poll_interval) => {}
                () = self.wake.notified() => {}
                Some(_) = running.join_next(), if !running.is_empty() => {}
            }
        }
        self.drain(running, grace).await;
    }

    async fn drain(&self, mut running: JoinSet<i64>, grace: Duration) {
        let deadline = tokio::time::sleep(grace);
        tokio::pin!(deadline);
        while !running.is_empty() {
            tokio::select! {
                () = &mut deadline => break,
                _ = running.join_next() => {}
            }
        }
        if !running.is_empty() {
            tracing::warn!(
                unfinished = running.len(),
                "shutdown grace elapsed; releasing unfinished jobs"
            );
            running.abort_all();
            if let Err(e) = self.release_mine().await {
                tracing::warn!(error = %e, "releasing job claims failed");
            }
        }
    }

    async fn claim(
        &self,
        kinds: &[&'static str],
        limit: usize,
    ) -> Result<Vec<entity::Model>, DbErr> {
        let now = Utc::now();
        let lease_until = now + self.cfg.lease;
        let due = Query::select()
            .column(Column::Id)
            .from(Entity)
            .and_where(Column::Status.eq(entity::QUEUED))
            .and_where(Column::Kind.is_in(kinds.iter().copied()))
            .and_where(Column::RunAt.lte(now))
            .and_where(
                Column::LockedUntil
                    .is_null()
                    .or(Column::LockedUntil.lt(now)),
            )
            .order_by(Column::RunAt, sea_orm::Order::Asc)
            .limit(u64::try_from(limit).unwrap_or(1))
            .lock_with_behavior(LockType::Update, LockBehavior::SkipLocked)
            .to_owned();
        Entity::update_many()
            .col_expr(Column::LockedUntil, Expr::value(lease_until))
            .col_expr(Column::LockedBy, Expr::value(self.id.clone()))
            .col_expr(Column::Attempts, Expr::col(Column::Attempts).add(1))
            .filter(Column::Id.in_subquery(due))
            .exec_with_returning(self.db.background())
            .await
    }

    async fn run_one(&self, job: entity::Model) {
        let ctx = JobContext {
            id: job.id,
            attempt: u32::try_from(job.attempts).unwrap_or(1),
            max_attempts: u32::try_from(job.max_attempts).unwrap_or(1),
        };
        let started = std::time::Instant::now();
        let outcome = match self.registry.get(&job.kind) {
            None => Err(JobError::fail(format!(
                "no handler for job kind {}",
                job.kind
            ))),
            Some(handler) => match serde_json::from_str(&job.payload) {
                Err(e) => Err(JobError::fail(format!("payload is not JSON: {e}"))),
                // A panicking handler must not take the worker down.
                Ok(payload) => match tokio::spawn(traced(&job, handler(payload, ctx))).await {
                    Ok(r) => r,
                    Err(e) => Err(JobError::retry(format!("handler panicked: {e}"))),
                },
            },
        };
        count_run(&job.kind, &outcome, ctx, started.elapsed());
        let erase = self.registry.erases(&job.kind);
        let recorded = match outcome {
            Ok(()) => self.finish(&job, erase).await,
            Err(err) if erase && (matches!(err, JobError::Fail(_)) || ctx.is_last_attempt()) => {
                let reason = err.reason();
                tracing::error!(job = job.id, kind = %job.kind, attempt = ctx.attempt, error = %reason, "job failed for good; its row is erased, not kept");
                self.finish(&job, erase).await
            }
            Err(err) => self.reschedule(&job, ctx, err).await,
        };
        if let Err(e) = recorded {
            tracing::warn!(job = job.id, kind = %job.kind, error = %e, "recording a job outcome failed");
        }
    }

    /// Deletes the job's row; with `erase`, also from the disk.
    async fn finish(&self, job: &entity::Model, erase: bool) -> Result<(), DbErr> {
        tracing::debug!(job = job.id, kind = %job.kind, "job done");
        Entity::delete_many()
            .filter(Column::Id.eq(job.id))
            .filter(Column::LockedBy.eq(self.id.clone()))
            .exec(self.db.write())
            .await?;
        if erase {
            self.db.erase_freed().await?;
        }
        Ok(())
    }

    async fn reschedule(
        &self,
        job: &entity::Model,
        ctx: JobContext,
        err: JobError,
    ) -> Result<(), DbErr> {
        let reason = err.reason();
        let (after, give_up) = match err {
            JobError::Fail(_) => (None, true),
            JobError::Retry { after, .. } => (after, ctx.is_last_attempt()),
        };
        let status = if give_up {
            entity::FAILED
        } else {
            entity::QUEUED
        };
        let delay = after.unwrap_or_else(|| backoff(self.cfg.retry_base, ctx.attempt));
        if give_up {
            tracing::error!(job = job.id, kind = %job.kind, attempt = ctx.attempt, error = %reason, "job failed for good");
        } else {
            tracing::warn!(job = job.id, kind = %job.kind, attempt = ctx.attempt, retry_in = ?delay, error = %reason, "job failed; will retry");
        }
        Entity::update_many()
            .col_expr(Column::Status, Expr::value(status))
            .col_expr(Column::RunAt, Expr::value(Utc::now() + delay))
            .col_expr(
                Column::LockedUntil,
                Expr::value(Option::<chrono::DateTime<Utc>>::None),
            )
            .col_expr(Column::LockedBy, Expr::value(Option::<String>::None))
            .col_expr(Column::LastError, Expr::value(truncate(&reason, 2000)))
            .filter(Column::Id.eq(job.id))
            .filter(Column::LockedBy.eq(self.id.clone()))
            .exec(self.db.write())
            .await
            .map(|_| ())
    }

    async fn release_mine(&self) -> Result<(), DbErr> {
        Entity::update_many()
            .col_expr(
                Column::LockedUntil,
                Expr::value(Option::<chrono::DateTime<Utc>>::None),
            )
            .col_expr(Column::LockedBy, Expr::value(Option::<String>::None))
            .filter(Column::LockedBy.eq(self.id.clone()))
            .exec(self.db.write())
            .await
            .map(|_| ())
    }
}

/// `keel_job_runs_total{kind, outcome}` (`done`, `retry`, `failed`: the
/// last, for good) and `keel_job_run_duration_seconds{kind}`.
fn count_run(kind: &str, outcome: &Result<(), JobError>, ctx: JobContext, took: Duration) {
    let label = match outcome {
        Ok(()) => "done",
        Err(JobError::Retry { .. }) if !ctx.is_last_attempt() => "retry",
        Err(_) => "failed",
    };
    metrics::counter!("keel_job_runs_total", "kind" => kind.to_owned(), "outcome" => label)
        .increment(1);
    metrics::histogram!("keel_job_run_duration_seconds", "kind" => kind.to_owned())
        .record(took.as_secs_f64());
}

fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// `run` inside the job's span (when traces are on), which the job's log
/// lines carry.
fn traced<F: Future>(job: &entity::Model, run: F) -> tracing::instrument::Instrumented<F> {
    let span = span_of(job);
    span.in_scope(|| tracing::debug!(job = job.id, kind = %job.kind, "running a job"));
    run.instrument(span)
}

/// The job's span: a consumer span named by its kind, linked to the span
/// that enqueued it; no span when traces are off.
fn span_of(job: &entity::Model) -> tracing::Span {
    if !trace::enabled() {
        return tracing::Span::none();
    }
    let span = tracing::info_span!(
        "job",
        otel.name = %format_args!("job {}", job.kind),
        otel.kind = "consumer",
        keel.job.kind = %job.kind,
        keel.job.id = job.id,
        keel.job.attempt = job.attempts,
    );
    crate::observe::trace::link(&span, job.trace_parent.as_deref());
    crate::observe::trace::note_ids(&span);
    span
}
