//! A sliding window of arrivals: at most `limit` units (notifications, say)
//! in any window of `span`, measured where a remote service measures it, on
//! arrival. A request counts from the moment it is admitted until `span`
//! after its answer came back: the remote side received it somewhere in
//! between, so a request admitted later cannot share a window of arrivals
//! with it unless both fit. (A token bucket cannot promise this: a full
//! bucket plus a span of refill lets one window hold burst + rate.)
//!
//! In-process, or in Redis when the cache is Redis, so every process sending
//! to one remote account shares one limit. In Redis the window is a sorted
//! set scored by expiry (settled requests: answer + span; requests in
//! flight: admission + a lease, so a process that dies mid-request frees its
//! room after the lease), kept and judged by Lua scripts on Redis' own clock.

use std::sync::Mutex;
use std::time::Duration;

use redis::aio::ConnectionManager;
use tokio::time::Instant;

use super::{Backend, Cache, CacheError, millis};

/// Polling interval while the window is full of requests still in flight.
pub const IN_FLIGHT_WAIT: Duration = Duration::from_millis(10);

/// How long a request in flight holds its room if its process never
/// settles it (it died); far longer than any request may take.
const LEASE: Duration = Duration::from_secs(120);

pub struct ArrivalWindow {
    limit: usize,
    span: Duration,
    store: Store,
}

enum Store {
    Local(Mutex<Log>),
    Redis {
        conn: ConnectionManager,
        key: String,
    },
}

#[derive(Default)]
struct Log {
    next_id: u64,
    entries: Vec<Entry>,
}

struct Entry {
    id: u64,
    n: usize,
    /// When the answer came back; `None` while in flight.
    done: Option<Instant>,
}

/// A request's place in the window; settled (its answer time recorded)
/// when dropped.
pub struct Admitted<'a> {
    window: &'a ArrivalWindow,
    id: String,
    n: usize,
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        self.window.settle(&self.id, self.n, Instant::now());
    }
}

const ADMIT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local n = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local used = 0
for i = 1, #entries, 2 do
  used = used + tonumber(string.match(entries[i], ':(%d+):'))
end
if used + n <= limit then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[5] .. ':' .. n .. ':i')
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) + tonumber(ARGV[3]))
  return 0
end
for i = 1, #entries, 2 do
  local m = entries[i]
  if string.sub(m, -2) == ':s' then
    used = used - tonumber(string.match(m, ':(%d+):'))
    if used + n <= limit then
      return math.max(tonumber(entries[i + 1]) - now, 1)
    end
  end
end
return -1";

const SETTLE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZREM', KEYS[1], ARGV[1] .. ':i') == 1 then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1] .. ':s')
end
return 0";

impl ArrivalWindow {
    /// A window in this process only.
    pub fn local(limit: u32, span: Duration) -> Self {
        Self {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            span,
            store: Store::Local(Mutex::new(Log::default())),
        }
    }

    /// A window shared by every process using `cache` (Redis), under `key`;
    /// in this process only when the cache is local.
    pub fn shared(cache: &Cache, key: &str, limit: u32, span: Duration) -> Self {
        match &cache.backend {
            Backend::Redis(conn) => Self {
                limit: usize::try_from(limit).unwrap_or(usize::MAX),
                span,
                store: Store::Redis {
                    conn: conn.clone(),
                    key: cache.key(&format!("window:{key}")),
                },
            },
            Backend::Local(_) => Self::local(limit, span),
        }
    }

    pub fn span(&self) -> Duration {
        self.span
    }

    pub fn is_shared(&self) -> bool {
        matches!(self.store, Store::Redis { .. })
    }

    /// Waits until `n` units fit (at most `limit` are asked for), then holds
    /// their room until the returned guard is dropped, and `span` after.
    pub async fn admit(&self, n: usize) -> Result<Admitted<'_>, CacheError> {
        let n = n.min(self.limit);
        loop {
            match self.try_admit(n).await? {
                Ok(id) => {
                    return Ok(Admitted {
                        window: self,
                        id,
                        n,
                    });
                }
                Err(wait) => tokio::time::sleep(wait).await,
            }
        }
    }

    /// Records `n` if they fit (their id); else how long to wait.
    async fn try_admit(&self, n: usize) -> Result<Result<String, Duration>, CacheError> {
        match &self.store {
            Store::Local(log) => Ok(lock(log)
                .admit(self.limit, self.span, n, Instant::now())
                .map(|id| id.to_string())),
            Store::Redis { conn, key } => {
                let mut conn = conn.clone();
                let id = uuid::Uuid::new_v4().simple().to_string();
                let wait: i64 = redis::Script::new(ADMIT)
                    .key(key)
                    .arg(n)
                    .arg(self.limit)
                    .arg(millis(self.span))
                    .arg(millis(LEASE))
                    .arg(&id)
                    .invoke_async(&mut conn)
                    .await?;
                Ok(match wait {
                    0 => Ok(id),
                    w if w < 0 => Err(IN_FLIGHT_WAIT),
                    w => Err(Duration::from_millis(u64::try_from(w).unwrap_or(1))),
                })
            }
        }
    }

    fn settle(&self, id: &str, n: usize, now: Instant) {
        match &self.store {
            Store::Local(log) => lock(log).settle(id.parse().unwrap_or(0), now),
            Store::Redis { conn, key } => {
                let (mut conn, key) = (conn.clone(), key.clone());
                let member = format!("{id}:{n}");
                let span = millis(self.span);
                // Dropped outside a runtime (a test's teardown): the lease
                // frees the room.
                if let Ok(rt) = tokio::runtime::Handle::try_current() {
                    rt.spawn(async move {
                        let settled: Result<i64, _> = redis::Script::new(SETTLE)
                            .key(key)
                            .arg(member)
                            .arg(span)
                            .invoke_async(&mut conn)
                            .await;
                        if let Err(e) = settled {
                            tracing::warn!(error = %e, "could not settle a request in the shared window; its lease will free it");
                        }
                    });
                }
            }
        }
    }
}

impl Log {
    /// Records `n` now if they fit (their id); else how long to wait.
    fn admit(
        &mut self,
        limit: usize,
        span: Duration,
        n: usize,
        now: Instant,
    ) -> Result<u64, Duration> {
        self.entries
            .retain(|e| e.done.is_none_or(|done| now.duration_since(done) < span));
        let mut used: usize = self.entries.iter().map(|e| e.n).sum();
        if used + n <= limit {
            self.next_id += 1;
            let id = self.next_id;
            self.entries.push(Entry { id, n, done: None });
            return Ok(id);
        }
        let mut settled: Vec<(Instant, usize)> = self
            .entries
            .iter()
            .filter_map(|e| e.done.map(|d| (d, e.n)))
            .collect();
        settled.sort_by_key(|(d, _)| *d);
        for (done, k) in settled {
            used -= k;
            if used + n <= limit {
                return Err((done + span).saturating_duration_since(now));
            }
        }
        Err(IN_FLIGHT_WAIT)
    }

    fn settle(&mut self, id: u64, now: Instant) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.id == id) {
            e.done = Some(now);
        }
    }
}

fn lock(m: &Mutex<Log>) -> std::sync::MutexGuard<'_, Log> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPAN: Duration = Duration::from_millis(1020);

    #[test]
    fn the_window_never_holds_more_than_the_limit() {
        let mut w = Log::default();
        let t0 = Instant::now();
        let ids: Vec<u64> = (0..6)
            .filter_map(|_| w.admit(600, SPAN, 100, t0).ok())
            .collect();
        assert_eq!(ids.len(), 6);
        // Full, and nothing has come back yet: wait and look again.
        assert_eq!(w.admit(600, SPAN, 100, t0), Err(IN_FLIGHT_WAIT));
        // One answer came back 300 ms in: its room frees a span after that.
        let back = t0 + Duration::from_millis(300);
        w.settle(ids[0], back);
        assert_eq!(w.admit(600, SPAN, 100, back), Err(SPAN));
        let free = back + SPAN;
        assert!(w.admit(600, SPAN, 100, free).is_ok());
        assert!(w.admit(600, SPAN, 1, free).is_err());
    }

    #[test]
    fn small_batches_fill_the_gap_exactly() {
        let mut w = Log::default();
        let t0 = Instant::now();
        let a = w.admit(600, SPAN, 550, t0).unwrap_or_default();
        let b = w
            .admit(600, SPAN, 50, t0 + Duration::from_millis(10))
            .unwrap_or_default();
        assert!(
            w.admit(600, SPAN, 1, t0 + Duration::from_millis(20))
                .is_err()
        );
        w.settle(a, t0 + Duration::from_millis(30));
        w.settle(b, t0 + Duration::from_millis(40));
        let later = t0 + Duration::from_millis(30) + SPAN;
        assert!(w.admit(600, SPAN, 550, later).is_ok());
        assert!(w.admit(600, SPAN, 100, later).is_err());
    }
}
