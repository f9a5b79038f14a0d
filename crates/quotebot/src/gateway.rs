//! The shards' gateway sessions as the manager sees them, answered at
//! `GET /api/health/gateway` for the operator console's health page
//! (`KEEL_CONSOLE_QUOTEBOT_URL`): how many shards Discord asked for, how
//! many have a ready session now, how many times one was started again
//! after it died, and when that last changed. A report, not a check:
//! readiness stays the database and Redis, so a gateway outage does not
//! get the container replaced.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Serialize;

/// Shared by the supervisor (which reports) and the health listener
/// (which answers); cheap to clone.
#[derive(Clone, Default)]
pub struct Gateway(Arc<Mutex<Shards>>);

#[derive(Default)]
struct Shards {
    total: u32,
    ready: BTreeSet<u32>,
    restarts: u64,
    changed_at: Option<DateTime<Utc>>,
}

/// What `GET /api/health/gateway` answers.
#[derive(Debug, Serialize)]
pub struct View {
    /// The shards Discord asked for (0 until the count is looked up).
    pub shards: u32,
    /// Those with a ready gateway session now.
    pub ready: u32,
    /// Shards started again after they died, since the manager started.
    pub restarts: u64,
    pub changed_at: Option<DateTime<Utc>>,
}

impl Gateway {
    fn change(&self, f: impl FnOnce(&mut Shards)) {
        let mut s = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut s);
        s.changed_at = Some(Utc::now());
    }

    /// The shard count looked up.
    pub fn shards(&self, total: u32) {
        self.change(|s| s.total = total);
    }

    pub fn ready(&self, id: u32) {
        self.change(|s| {
            s.ready.insert(id);
        });
    }

    /// Shard `id` ended.
    pub fn down(&self, id: u32) {
        self.change(|s| {
            s.ready.remove(&id);
        });
    }

    /// A dead shard started again.
    pub fn restarted(&self) {
        self.change(|s| s.restarts += 1);
    }

    pub fn view(&self) -> View {
        let s = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        View {
            shards: s.total,
            ready: u32::try_from(s.ready.len()).unwrap_or(u32::MAX),
            restarts: s.restarts,
            changed_at: s.changed_at,
        }
    }
}

pub async fn answer(State(g): State<Gateway>) -> keel_platform::http::Json<View> {
    keel_platform::http::Json(g.view())
}
