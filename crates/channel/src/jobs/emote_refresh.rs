//! The emote refresh (cron `0 */12 * * *`, and once at start while no
//! source was ever fetched).

use keel_platform::db::Db;
use keel_platform::jobs::{self, Job, JobContext, JobError, JobRegistry};
use keel_platform::tasks::Tasks;
use serde::{Deserialize, Serialize};

use super::Deps;
use crate::domain::emotes;

#[derive(Debug, Serialize, Deserialize)]
pub struct EmoteRefresh {}

impl Job for EmoteRefresh {
    const KIND: &'static str = "channel.emote_refresh";
    /// Each source that fails keeps its emotes; the next tick tries again.
    const MAX_ATTEMPTS: u32 = 3;
}

pub fn register(registry: &mut JobRegistry, d: Deps) {
    registry.register(move |_job: EmoteRefresh, _ctx: JobContext| {
        let d = d.clone();
        async move {
            let results = emotes::refresh(&d.db, &d.http, &d.cfg.emotes).await?;
            tracing::info!(?results, "emotes refreshed");
            Ok::<(), JobError>(())
        }
    });
}

/// Enqueues one refresh now when no source was ever fetched.
pub fn at_start_if_empty(db: Db, tasks: &Tasks) {
    tasks.spawn("channel emotes at start", async move {
        match emotes::never_fetched(&db).await {
            Ok(true) => {
                let now = chrono::Utc::now();
                if let Err(e) = jobs::enqueue_unique(
                    db.write(),
                    &EmoteRefresh {},
                    "channel:emotes:initial",
                    now,
                )
                .await
                {
                    tracing::warn!(error = %e, "could not enqueue the first emote refresh");
                }
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "could not look at the emote set"),
        }
    });
}
