//! The cache's circuit breaker: after a Redis failure Redis is not asked
//! for a second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{CacheError, millis};

/// After a Redis failure, Redis is not asked again for a second: while it
/// is away, each cache call fails (and its caller falls back) at once
/// instead of every request waiting out the connection's timeouts.
/// `/readyz` pings Redis regardless.
#[derive(Clone, Default)]
pub(super) struct Breaker {
    /// Milliseconds since `EPOCH` until which Redis is not asked.
    open_until: Arc<std::sync::atomic::AtomicU64>,
}

static EPOCH: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);
const BREAK_FOR: Duration = Duration::from_secs(1);

impl Breaker {
    fn now() -> u64 {
        millis(EPOCH.elapsed())
    }

    pub(super) fn check(&self) -> Result<(), CacheError> {
        if Self::now() < self.open_until.load(std::sync::atomic::Ordering::Relaxed) {
            Err(CacheError::Unavailable)
        } else {
            Ok(())
        }
    }

    /// `r`, tripping the breaker when it failed.
    pub(super) fn record<T>(&self, r: Result<T, redis::RedisError>) -> Result<T, CacheError> {
        if r.is_err() {
            self.trip();
        }
        Ok(r?)
    }

    /// Redis is not asked for [`BREAK_FOR`].
    pub(super) fn trip(&self) {
        self.open_until.store(
            Self::now() + millis(BREAK_FOR),
            std::sync::atomic::Ordering::Relaxed,
        );
    }
}
