//! `analytics.viewers`.

use super::Ctx;
use crate::domain::{analytics, channel};
use crate::error::Error;
use crate::trpc::{Access, Kind, Procedures, no_input};

pub fn add(p: Procedures<Ctx>) -> Procedures<Ctx> {
    p.procedure(
        Kind::Query,
        "analytics.viewers",
        Access::SignedIn,
        "Viewer samples of the current session and the last 7 days; peak and average per session",
        no_input(viewers),
    )
}

async fn viewers(ctx: Ctx) -> Result<analytics::ViewerReport, Error> {
    let db = &ctx.state.platform.db;
    let live = channel::config(db).await?.live_session_id;
    Ok(analytics::report(db, live.as_deref(), chrono::Utc::now()).await?)
}
