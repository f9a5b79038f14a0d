//! The analytics sampler (cron `* * * * *`): while live, the call's viewer
//! count from the provider becomes a sample of the tick and raises the
//! session's peak; samples older than 7 days are pruned, and so are
//! webhook delivery ids past the provider's retry window.

use chrono::{DateTime, Utc};
use keel_platform::jobs::{Job, JobContext, JobError, JobRegistry};
use serde::{Deserialize, Serialize};

use super::Deps;
use crate::domain::{analytics, channel, webhook};

#[derive(Debug, Serialize, Deserialize)]
pub struct SampleViewers {
    pub tick: DateTime<Utc>,
}

impl Job for SampleViewers {
    const KIND: &'static str = "channel.sample_viewers";
    /// A late sample is worth little: the next tick takes another.
    const MAX_ATTEMPTS: u32 = 2;
}

pub fn register(registry: &mut JobRegistry, d: Deps) {
    registry.register(move |job: SampleViewers, _ctx: JobContext| {
        let d = d.clone();
        async move { run(&d, job.tick).await }
    });
}

async fn run(d: &Deps, tick: DateTime<Utc>) -> Result<(), JobError> {
    let now = Utc::now();
    analytics::prune(&d.db, now).await?;
    webhook::prune_seen(&d.db, now).await?;
    let Some(session) = channel::config(&d.db).await?.live_session_id else {
        return Ok(());
    };
    let call = d
        .stream
        .get_call()
        .await
        .map_err(|e| JobError::retry(e.to_string()))?;
    analytics::record(&d.db, &session, tick, call.viewers).await?;
    d.live.publish().await;
    Ok(())
}
