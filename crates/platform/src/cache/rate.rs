//! Sliding-window rate limits (the two-counter estimate): hits are counted
//! per fixed slot of the window's length, and a hit is judged against the
//! current slot's count plus the previous slot's count weighted by how much
//! of the previous slot the sliding window still covers. Unlike a plain
//! fixed window, a burst cannot double its allowance by straddling a slot
//! boundary (`limit` just before it and `limit` again just after).
//!
//! Every hit counts, refused ones included, so a client that keeps
//! hammering stays refused.
//!
//! While Redis cannot be reached, hits are counted in this process instead
//! (logged): the limit still holds per node, and the endpoints it guards
//! keep serving rather than failing with the cache.

use std::time::{Duration, Instant};

use crate::observe::{self, Call};

use super::{Backend, Cache, lock, millis};

/// Outcome of a rate-limit check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateDecision {
    pub allowed: bool,
    /// Hits in the current slot, this one included.
    pub count: u64,
    /// How long until one more hit would be allowed (if nothing else
    /// arrives meanwhile).
    pub retry_after: Duration,
}

/// Increments the current slot, reads the previous one.
const HIT_SCRIPT: &str = r"
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local p = tonumber(redis.call('GET', KEYS[2]) or '0')
return {c, p}";

impl Cache {
    /// Counts one hit of `subject` (an address, a login name, a user id)
    /// against the limit `scope` names (`accounts:login:name`), allowing at
    /// most `limit` hits in any `window` (estimated as above). The key
    /// names the subject by its keyed pseudonym, never as it is: a Redis
    /// key list shows no one's name or address.
    pub async fn hit(
        &self,
        scope: &str,
        subject: &str,
        limit: u64,
        window: Duration,
    ) -> RateDecision {
        let window_ms = millis(window).max(1);
        let now_ms = u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0);
        let slot = now_ms / window_ms;
        let elapsed = now_ms % window_ms;
        let key = format!("{scope}:{}", self.pseudonyms.of(subject));
        let current = self.key(&format!("rl:{key}:{slot}"));
        let previous = self.key(&format!("rl:{key}:{}", slot.saturating_sub(1)));
        // A slot's count is read during the next slot too.
        let keep = Duration::from_millis(2 * window_ms - elapsed);
        let (count, prev) = match &self.backend {
            Backend::Local(local) => count_here(local, current, &previous, keep),
            Backend::Redis(conn) => {
                let counted = match self.breaker.check() {
                    Ok(()) => {
                        let mut conn = conn.clone();
                        let script = redis::Script::new(HIT_SCRIPT);
                        let mut hit = script.key(&current);
                        hit.key(&previous).arg(millis(keep));
                        let call = Call::redis("EVALSHA");
                        let answer =
                            observe::call(call, |_| hit.invoke_async::<(u64, u64)>(&mut conn))
                                .await;
                        self.breaker.record(answer)
                    }
                    Err(e) => Err(e),
                };
                match counted {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::debug!(error = %e, scope, "rate limit: Redis unavailable; counting in this process");
                        count_here(&self.degraded, current, &previous, keep)
                    }
                }
            }
        };
        decide(limit, window_ms, elapsed, prev, count)
    }
}

impl Cache {
    /// A limit of `limit` hits a minute (0: none) on `subject` under
    /// `scope`: `None` while within it, else how long until one more hit
    /// would pass (at least a second). What the services' sign-in,
    /// registration and set-up limits share.
    pub async fn per_minute(&self, scope: &str, subject: &str, limit: u64) -> Option<Duration> {
        if limit == 0 {
            return None;
        }
        let d = self
            .hit(scope, subject, limit, Duration::from_secs(60))
            .await;
        (!d.allowed).then(|| d.retry_after.max(Duration::from_secs(1)))
    }

    /// `subject` as rate-limit keys and logs name it: its keyed pseudonym.
    pub fn pseudonym(&self, subject: &str) -> String {
        self.pseudonyms.of(subject)
    }
}

/// Counts a hit in an in-process table: (this slot's count, the previous
/// slot's).
fn count_here(
    local: &std::sync::Mutex<super::Local>,
    current: String,
    previous: &str,
    keep: Duration,
) -> (u64, u64) {
    let mut l = lock(local);
    l.sweep();
    let entry = l
        .counters
        .entry(current)
        .or_insert((0, Instant::now() + keep));
    entry.0 += 1;
    let count = entry.0;
    let prev = l
        .counters
        .get(previous)
        .filter(|(_, exp)| *exp > Instant::now())
        .map_or(0, |(n, _)| *n);
    (count, prev)
}

/// The judgement, in integer milliseconds: `prev · (W − e) / W + count ≤
/// limit`, and when it fails, the wait until one more hit would pass.
fn decide(limit: u64, w: u64, elapsed: u64, prev: u64, count: u64) -> RateDecision {
    let weighted = |prev: u64, e: u64, count: u64| {
        u128::from(prev) * u128::from(w - e) + u128::from(count) * u128::from(w)
    };
    let cap = u128::from(limit) * u128::from(w);
    let allowed = weighted(prev, elapsed, count) <= cap;
    RateDecision {
        allowed,
        count,
        retry_after: if allowed {
            Duration::ZERO
        } else {
            Duration::from_millis(wait(limit, w, elapsed, prev, count))
        },
    }
}

/// Milliseconds until a further hit fits: within this slot if the previous
/// slot's share fades enough, else into the next slot, where this slot's
/// count becomes the fading one. Never more than two windows.
fn wait(limit: u64, w: u64, elapsed: u64, prev: u64, count: u64) -> u64 {
    // One more hit must fit: prev · (W − e′) / W + count + 1 ≤ limit.
    if count < limit && prev > 0 {
        let room = u128::from(limit - count - 1) * u128::from(w);
        // e′ ≥ W − room / prev
        let need = u128::from(w).saturating_sub(room / u128::from(prev));
        let need = u64::try_from(need).unwrap_or(w);
        if need < w {
            return need.saturating_sub(elapsed).max(1);
        }
    }
    let to_next = w - elapsed;
    if count == 0 || limit == 0 {
        return to_next + if limit == 0 { w } else { 0 };
    }
    // In the next slot: count · (W − e′) / W + 1 ≤ limit.
    let room = u128::from(limit - 1) * u128::from(w);
    let need = u128::from(w).saturating_sub(room / u128::from(count));
    to_next + u64::try_from(need).unwrap_or(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_straddling_a_slot_boundary_is_still_limited() {
        // 20 hits at the very end of one slot, the 21st just after.
        let d = decide(20, 60_000, 10, 20, 1);
        assert!(!d.allowed);
        assert!(d.retry_after > Duration::ZERO);
    }

    #[test]
    fn the_previous_slot_fades_as_the_window_slides() {
        assert!(!decide(10, 1000, 100, 10, 2).allowed);
        assert!(decide(10, 1000, 900, 10, 1).allowed);
        assert!(decide(10, 1000, 0, 0, 10).allowed);
        assert!(!decide(10, 1000, 999, 0, 11).allowed);
    }

    #[test]
    fn the_wait_ends_where_one_more_hit_fits() {
        // prev 10 over 1000 ms, 6 counted (the refused one too), limit 10:
        // the next needs 10·(1000−e)/1000 + 7 ≤ 10 → e ≥ 700.
        let d = decide(10, 1000, 100, 10, 6);
        assert!(!d.allowed);
        assert_eq!(d.retry_after, Duration::from_millis(600));
        let later = decide(10, 1000, 700, 10, 7);
        assert!(later.allowed);
        // count at the limit: into the next slot, where count fades.
        let d = decide(2, 1000, 200, 0, 3);
        // next slot: 3·(1000−e)/1000 + 1 ≤ 2 → e ≥ 667
        assert_eq!(d.retry_after, Duration::from_millis(800 + 667));
        assert!(decide(2, 1000, 667, 3, 1).allowed);
    }
}
