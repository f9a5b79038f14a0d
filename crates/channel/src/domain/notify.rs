//! The live notification as the domain asks for it: one job per live
//! start, enqueued in the start's own transaction (`jobs::live_notify`
//! posts it).

use chrono::{DateTime, Utc};
use keel_platform::jobs::{self, Job};
use keel_platform::sea_orm::{ConnectionTrait, DbErr};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
pub struct LiveNotify {
    pub session_id: String,
}

impl Job for LiveNotify {
    const KIND: &'static str = "channel.live_notify";
    const MAX_ATTEMPTS: u32 = 12;
}

/// Enqueues the notification of `session_id`, due `at` (once per session).
pub async fn enqueue<C: ConnectionTrait>(
    conn: &C,
    session_id: &str,
    at: DateTime<Utc>,
) -> Result<(), DbErr> {
    let job = LiveNotify {
        session_id: session_id.to_owned(),
    };
    jobs::enqueue_unique(conn, &job, &format!("channel:live-notify:{session_id}"), at).await?;
    Ok(())
}
