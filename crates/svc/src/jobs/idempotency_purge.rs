//! Forgets Idempotency-Keys past their 24 hours, every hour (cron
//! `KEEL_SVC_IDEMPOTENCY_PURGE_CRON`), whoever made them: a send's key
//! holds its request's fingerprint, and an admin who never sends again
//! would otherwise keep theirs for good.

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::jobs::cron::{Cron, Schedule};
use keel_platform::jobs::{Job, JobContext, JobError, JobRegistry};
use keel_platform::tasks::Tasks;
use serde::{Deserialize, Serialize};

use crate::domain::push::idempotency;

#[derive(Debug, Serialize, Deserialize)]
pub struct PurgeIdempotencyKeys {
    /// The tick that queued it.
    pub at: DateTime<Utc>,
}

impl Job for PurgeIdempotencyKeys {
    const KIND: &'static str = "svc.push.idempotency_purge";
}

/// Runs the purge here and starts this node's scheduler.
pub fn register(registry: &mut JobRegistry, tasks: &Tasks, db: &Db, cron: Cron) {
    let db2 = db.clone();
    registry.register(move |_job: PurgeIdempotencyKeys, _ctx: JobContext| {
        let db = db2.clone();
        async move {
            let gone = idempotency::purge_expired(&db, Utc::now())
                .await
                .map_err(JobError::retry)?;
            if gone > 0 {
                tracing::info!(gone, "expired Idempotency-Keys forgotten");
            }
            Ok(())
        }
    });
    Schedule {
        name: "svc.push.idempotency_purge",
        cron,
        job: |at| PurgeIdempotencyKeys { at },
    }
    .start(db.clone(), tasks);
}
