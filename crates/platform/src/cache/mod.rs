//! Short-lived shared state: a key-value cache with expiry and
//! sliding-window rate limits. Redis when `REDIS_URL` is set (shared by every node),
//! otherwise in this process (one node).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::config::Secret;
use crate::crypto::Pseudonyms;
use crate::observe::{self, Call};

mod breaker;
mod rate;
mod sweep;
mod window;

use breaker::Breaker;

pub use rate::RateDecision;
pub use sweep::Sweep;
pub use window::{Admitted, ArrivalWindow};

/// Redis failed or did not answer in time. Every such error means the
/// cache is unavailable (a request that needs it answers 503).
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("Redis failed")]
    Redis(#[from] redis::RedisError),
    #[error("Redis did not answer in time")]
    Timeout,
    /// Redis failed a moment ago: not asked again yet (see `Breaker`).
    #[error("Redis is unavailable (it failed less than a second ago)")]
    Unavailable,
}

/// The cache; cheap to clone.
#[derive(Clone)]
pub struct Cache {
    backend: Backend,
    prefix: String,
    /// Rate limits counted in this process while Redis cannot be reached
    /// (each node then limits on its own; see `rate`).
    degraded: Arc<Mutex<Local>>,
    breaker: Breaker,
    /// What rate-limit keys name their subject by (see `rate`).
    pseudonyms: Pseudonyms,
}

#[derive(Clone)]
enum Backend {
    Local(Arc<Mutex<Local>>),
    Redis(ConnectionManager),
}

#[derive(Default)]
struct Local {
    entries: HashMap<String, (Vec<u8>, Instant)>,
    counters: HashMap<String, (u64, Instant)>,
    ops: u64,
}

impl Local {
    fn sweep(&mut self) {
        self.ops += 1;
        if self.ops.is_multiple_of(1024) {
            let now = Instant::now();
            self.entries.retain(|_, (_, exp)| *exp > now);
            self.counters.retain(|_, (_, exp)| *exp > now);
        }
    }

    /// The value at `key` unless it has expired.
    fn live(&mut self, key: &str) -> Option<&[u8]> {
        self.sweep();
        let now = Instant::now();
        self.entries
            .get(key)
            .filter(|(_, exp)| *exp > now)
            .map(|(v, _)| v.as_slice())
    }
}

impl Cache {
    /// An in-process cache.
    pub fn local(prefix: &str) -> Self {
        Self {
            backend: Backend::Local(Arc::new(Mutex::new(Local::default()))),
            prefix: prefix.to_owned(),
            degraded: Arc::default(),
            breaker: Breaker::default(),
            pseudonyms: Pseudonyms::UNKEYED,
        }
    }

    /// A Redis-backed cache; fails if Redis does not answer in `within`.
    pub async fn redis(url: &Secret, prefix: &str, within: Duration) -> Result<Self, CacheError> {
        let client = redis::Client::open(url.expose())?;
        let manager = tokio::time::timeout(
            within,
            ConnectionManager::new_with_config(client, Self::manager_config()),
        )
        .await
        .map_err(|_| CacheError::Timeout)??;
        Ok(Self::with_manager(manager, prefix))
    }

    /// A Redis-backed cache that starts even while Redis does not answer
    /// (for services to which Redis is optional): it connects when Redis
    /// comes, and until then every call fails at once, as in an outage. A
    /// URL that is not one still fails.
    pub async fn redis_or_later(
        url: &Secret,
        prefix: &str,
        within: Duration,
    ) -> Result<Self, CacheError> {
        match Self::redis(url, prefix, within).await {
            Ok(cache) => Ok(cache),
            Err(CacheError::Redis(e)) if e.kind() == redis::ErrorKind::InvalidClientConfig => {
                Err(CacheError::Redis(e))
            }
            Err(e) => {
                tracing::warn!(
                    error = %crate::failure::chain(&e),
                    "Redis does not answer at start: serving without it until it does"
                );
                let client = redis::Client::open(url.expose())?;
                let manager =
                    ConnectionManager::new_lazy_with_config(client, Self::manager_config())?;
                let cache = Self::with_manager(manager, prefix);
                cache.breaker.trip();
                Ok(cache)
            }
        }
    }

    /// Fail fast while Redis is away instead of holding requests: a command
    /// takes well under a millisecond, so one without an answer in a second
    /// (a partition drops packets without an error) is a Redis away.
    fn manager_config() -> ConnectionManagerConfig {
        ConnectionManagerConfig::new()
            .set_response_timeout(Some(Duration::from_secs(1)))
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_number_of_retries(2)
    }

    fn with_manager(manager: ConnectionManager, prefix: &str) -> Self {
        Self {
            backend: Backend::Redis(manager),
            prefix: prefix.to_owned(),
            degraded: Arc::default(),
            breaker: Breaker::default(),
            pseudonyms: Pseudonyms::UNKEYED,
        }
    }

    /// Rate-limit keys name their subject by `pseudonyms` (the platform
    /// keys them with `KEEL_SECRET_KEY`).
    #[must_use]
    pub fn with_pseudonyms(mut self, pseudonyms: Pseudonyms) -> Self {
        self.pseudonyms = pseudonyms;
        self
    }

    pub fn is_redis(&self) -> bool {
        matches!(self.backend, Backend::Redis(_))
    }

    /// One Redis command through the breaker.
    async fn ask<T: redis::FromRedisValue>(
        &self,
        conn: &ConnectionManager,
        cmd: &redis::Cmd,
    ) -> Result<T, CacheError> {
        self.breaker.check()?;
        let mut conn = conn.clone();
        let call = Call::redis(&command_name(cmd));
        let answer = observe::call(call, |_| cmd.query_async(&mut conn)).await;
        self.breaker.record(answer)
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, CacheError> {
        let key = self.key(key);
        match &self.backend {
            Backend::Local(local) => Ok(lock(local).live(&key).map(<[u8]>::to_vec)),
            Backend::Redis(conn) => self.ask(conn, redis::cmd("GET").arg(key)).await,
        }
    }

    pub async fn set(&self, key: &str, value: &[u8], ttl: Duration) -> Result<(), CacheError> {
        let key = self.key(key);
        match &self.backend {
            Backend::Local(local) => {
                let mut l = lock(local);
                l.sweep();
                l.entries
                    .insert(key, (value.to_vec(), Instant::now() + ttl));
                Ok(())
            }
            Backend::Redis(conn) => {
                let mut set = redis::cmd("SET");
                set.arg(key).arg(value).arg("PX").arg(millis(ttl));
                self.ask(conn, &set).await
            }
        }
    }

    /// Adds one to the counter at `key` (0 when absent) and keeps it for
    /// `ttl` from now: the new value.
    pub async fn incr(&self, key: &str, ttl: Duration) -> Result<i64, CacheError> {
        let key = self.key(key);
        match &self.backend {
            Backend::Local(local) => {
                let mut l = lock(local);
                let current = l
                    .live(&key)
                    .and_then(|v| std::str::from_utf8(v).ok()?.parse::<i64>().ok())
                    .unwrap_or(0);
                let next = current.saturating_add(1);
                l.entries
                    .insert(key, (next.to_string().into_bytes(), Instant::now() + ttl));
                Ok(next)
            }
            Backend::Redis(conn) => {
                self.breaker.check()?;
                let mut conn = conn.clone();
                let mut pipe = redis::pipe();
                pipe.atomic()
                    .cmd("INCR")
                    .arg(&key)
                    .cmd("PEXPIRE")
                    .arg(&key)
                    .arg(millis(ttl).max(1))
                    .ignore();
                let call = Call::redis("MULTI INCR PEXPIRE");
                let answer = observe::call(call, |_| pipe.query_async(&mut conn)).await;
                let (n,): (i64,) = self.breaker.record(answer)?;
                Ok(n)
            }
        }
    }

    /// The counter at `key` (0 when absent).
    pub async fn counter(&self, key: &str) -> Result<i64, CacheError> {
        Ok(self
            .get(key)
            .await?
            .and_then(|v| std::str::from_utf8(&v).ok()?.parse().ok())
            .unwrap_or(0))
    }

    /// Sets `key` for `ttl` unless it is already set; true when this call
    /// set it (a cooldown or a one-off claim shared by every node).
    pub async fn claim(&self, key: &str, ttl: Duration) -> Result<bool, CacheError> {
        let key = self.key(key);
        match &self.backend {
            Backend::Local(local) => {
                let mut l = lock(local);
                if l.live(&key).is_some() {
                    return Ok(false);
                }
                l.entries.insert(key, (Vec::new(), Instant::now() + ttl));
                Ok(true)
            }
            Backend::Redis(conn) => {
                let mut nx = redis::cmd("SET");
                nx.arg(key)
                    .arg("1")
                    .arg("NX")
                    .arg("PX")
                    .arg(millis(ttl).max(1));
                let set: Option<String> = self.ask(conn, &nx).await?;
                Ok(set.is_some())
            }
        }
    }

    pub async fn delete(&self, key: &str) -> Result<(), CacheError> {
        let key = self.key(key);
        match &self.backend {
            Backend::Local(local) => {
                lock(local).entries.remove(&key);
                Ok(())
            }
            Backend::Redis(conn) => self.ask(conn, redis::cmd("DEL").arg(key)).await,
        }
    }

    /// Checks the cache answers within `within` (always true in-process).
    pub async fn ping_within(&self, within: Duration) -> Result<(), crate::check::Unhealthy> {
        match &self.backend {
            Backend::Local(_) => Ok(()),
            Backend::Redis(conn) => {
                let mut conn = conn.clone();
                let cmd = redis::cmd("PING");
                match tokio::time::timeout(within, cmd.query_async::<String>(&mut conn)).await {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(e)) => Err(crate::check::Unhealthy::Redis(e)),
                    Err(_) => Err(crate::check::Unhealthy::TimedOut),
                }
            }
        }
    }
}

fn lock(m: &Mutex<Local>) -> std::sync::MutexGuard<'_, Local> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A command's name (its first word), for its span; borrowed, so a
/// request pays no allocation for it while traces are off.
fn command_name(cmd: &redis::Cmd) -> std::borrow::Cow<'_, str> {
    match cmd.args_iter().next() {
        Some(redis::Arg::Simple(name)) => String::from_utf8_lossy(name),
        _ => "command".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn local_values_expire() -> Result<(), CacheError> {
        let c = Cache::local("t:");
        c.set("k", b"v", Duration::from_millis(30)).await?;
        assert_eq!(c.get("k").await?, Some(b"v".to_vec()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(c.get("k").await?, None);
        Ok(())
    }

    #[tokio::test]
    async fn counters_count_from_zero() -> Result<(), CacheError> {
        let c = Cache::local("t:");
        assert_eq!(c.counter("n").await?, 0);
        assert_eq!(c.incr("n", Duration::from_secs(60)).await?, 1);
        assert_eq!(c.incr("n", Duration::from_secs(60)).await?, 2);
        assert_eq!(c.counter("n").await?, 2);
        Ok(())
    }

    #[tokio::test]
    async fn a_claim_holds_until_it_expires() -> Result<(), CacheError> {
        let c = Cache::local("t:");
        assert!(c.claim("k", Duration::from_millis(30)).await?);
        assert!(!c.claim("k", Duration::from_millis(30)).await?);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(c.claim("k", Duration::from_millis(30)).await?);
        Ok(())
    }

    #[tokio::test]
    async fn local_rate_limit_allows_up_to_the_limit() -> Result<(), CacheError> {
        let c = Cache::local("t:");
        let window = Duration::from_secs(3600);
        for _ in 0..3 {
            assert!(c.hit("t", "x", 3, window).await.allowed);
        }
        let d = c.hit("t", "x", 3, window).await;
        assert!(!d.allowed);
        assert!(d.retry_after > Duration::ZERO && d.retry_after <= 2 * window);
        assert!(c.hit("t", "y", 3, window).await.allowed);
        Ok(())
    }
}
