//! The channel's jobs, one per file: the live notification, and the two
//! cron jobs (emote refresh, analytics sampler).

pub mod emote_refresh;
pub mod live_notify;
pub mod sample_viewers;

use std::sync::Arc;

use keel_platform::db::Db;
use keel_platform::jobs::JobRegistry;
use keel_platform::jobs::cron::Schedule;
use keel_platform::outbound::HttpClient;
use keel_platform::tasks::Tasks;

use crate::config::Config;
use crate::domain::live::Live;
use crate::getstream::GetStream;

/// What the channel's jobs need.
#[derive(Clone)]
pub struct Deps {
    pub db: Db,
    pub http: HttpClient,
    pub stream: GetStream,
    pub cfg: Arc<Config>,
    pub live: Arc<Live>,
}

/// Runs the jobs in this process and starts this node's cron schedulers.
pub fn register(registry: &mut JobRegistry, tasks: &Tasks, d: &Deps) {
    live_notify::register(registry, d.clone());
    emote_refresh::register(registry, d.clone());
    sample_viewers::register(registry, d.clone());
    Schedule {
        name: "channel.emote_refresh",
        cron: d.cfg.emote_cron.clone(),
        job: |_tick| emote_refresh::EmoteRefresh {},
    }
    .start(d.db.clone(), tasks);
    Schedule {
        name: "channel.sample_viewers",
        cron: d.cfg.sampler_cron.clone(),
        job: |tick| sample_viewers::SampleViewers { tick },
    }
    .start(d.db.clone(), tasks);
    emote_refresh::at_start_if_empty(d.db.clone(), tasks);
}
