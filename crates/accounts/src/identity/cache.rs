//! A short-lived in-process cache of live sessions and their users, so a
//! request's authentication usually costs no database read.
//!
//! Every change this process makes to a session or a user invalidates the
//! entries it affects, after it commits; an epoch counter keeps a read that
//! raced with an invalidation from caching what it read. Entries also expire
//! after the configured time, which bounds how late a change made straight
//! in the database is seen.
//!
//! Across nodes (with Redis): every change also bumps the user's epoch in
//! Redis before the response goes out, and a cached entry is used only
//! while the epoch it was cached under is still current, one Redis read per
//! request. So a revocation on one node takes effect on every node at once.
//! When Redis cannot be read, nothing is served from or put in the cache.
//! Without Redis on PostgreSQL, where several nodes are the norm, the cache
//! is off by default (docs/accounts.md).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use keel_platform::cache::{Cache, Sweep};
use keel_platform::db::Db;
use keel_platform::sea_orm::EntityTrait;

use crate::entity::{session, user};

const CAPACITY: usize = 100_000;

struct Entry {
    user: Arc<user::Model>,
    session_expires: DateTime<Utc>,
    cached_at: Instant,
    /// The user's shared epoch when this was read (with Redis).
    shared: Option<i64>,
}

struct Inner {
    epoch: u64,
    entries: HashMap<String, Entry>,
    /// Entries past the time to live are dropped this often.
    sweep: Sweep,
}

/// A user's epoch in Redis, as read now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedEpoch {
    /// The cache is this process's alone (no Redis).
    NotShared,
    Now(i64),
    /// Redis could not be read: nothing is served from the cache.
    Unreadable,
}

impl SharedEpoch {
    /// The value, when there is one.
    pub fn known(self) -> Option<i64> {
        match self {
            Self::Now(n) => Some(n),
            Self::NotShared | Self::Unreadable => None,
        }
    }
}

pub struct SessionCache {
    ttl: Duration,
    inner: Mutex<Inner>,
    /// Redis, when the cache is shared by several nodes.
    shared: Option<Cache>,
}

fn epoch_key(user_id: &str) -> String {
    format!("accounts:user-epoch:{user_id}")
}

impl SessionCache {
    /// A cache keeping entries for `ttl`; zero disables it. With `shared`
    /// (a Redis cache), entries are checked against the user's epoch there.
    pub fn new(ttl: Duration, shared: Option<Cache>) -> Self {
        Self {
            ttl,
            inner: Mutex::new(Inner {
                epoch: 0,
                entries: HashMap::new(),
                sweep: Sweep::every(ttl),
            }),
            shared: shared.filter(Cache::is_redis),
        }
    }

    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// The user's epoch in Redis now.
    pub async fn shared_epoch(&self, user_id: &str) -> SharedEpoch {
        let Some(cache) = &self.shared else {
            return SharedEpoch::NotShared;
        };
        match cache.counter(&epoch_key(user_id)).await {
            Ok(n) => SharedEpoch::Now(n),
            Err(e) => {
                tracing::warn!(error = %e, "session cache: Redis unreadable; reading the database");
                SharedEpoch::Unreadable
            }
        }
    }

    /// Tells every node the user (or one of its sessions) changed. The key
    /// outlives any entry cached under the old value.
    pub async fn bump(&self, user_id: &str) {
        let Some(cache) = &self.shared else {
            return;
        };
        let keep = self.ttl + Duration::from_secs(3600);
        if let Err(e) = cache.incr(&epoch_key(user_id), keep).await {
            // Nodes that cannot read Redis do not use the cache either.
            tracing::error!(error = %e, user = user_id, "session cache: could not publish a change to Redis");
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    /// The user of live session `session_id`, if cached and fresh, with
    /// the shared epoch it was cached under (to check when shared).
    pub fn get(&self, session_id: &str, user_id: &str) -> Option<(Arc<user::Model>, Option<i64>)> {
        if !self.enabled() {
            return None;
        }
        let inner = self.lock();
        let e = inner.entries.get(session_id)?;
        let fresh = e.cached_at.elapsed() < self.ttl && e.session_expires > Utc::now();
        (fresh && e.user.id == user_id).then(|| (e.user.clone(), e.shared))
    }

    /// Taken before reading the database; pass it to `insert`.
    pub fn epoch(&self) -> u64 {
        self.lock().epoch
    }

    /// Caches what was read, unless something was invalidated meanwhile.
    pub fn insert(
        &self,
        session_id: &str,
        user: Arc<user::Model>,
        session_expires: DateTime<Utc>,
        epoch: u64,
        shared: Option<i64>,
    ) {
        if !self.enabled() || (self.is_shared() && shared.is_none()) {
            return;
        }
        let mut inner = self.lock();
        if inner.epoch != epoch {
            return;
        }
        let ttl = self.ttl;
        if inner.sweep.due() || inner.entries.len() >= CAPACITY {
            inner.entries.retain(|_, e| e.cached_at.elapsed() < ttl);
            if inner.entries.len() >= CAPACITY {
                inner.entries.clear();
            }
        }
        inner.entries.insert(
            session_id.to_owned(),
            Entry {
                user,
                session_expires,
                cached_at: Instant::now(),
                shared,
            },
        );
    }

    /// After a session was revoked.
    pub fn forget_session(&self, session_id: &str) {
        let mut inner = self.lock();
        inner.epoch += 1;
        inner.entries.remove(session_id);
    }

    /// After a user, or any of its sessions, changed.
    pub fn forget_user(&self, user_id: &str) {
        let mut inner = self.lock();
        inner.epoch += 1;
        inner.entries.retain(|_, e| e.user.id != user_id);
    }

    /// Call after committing any change to the user's row or sessions,
    /// before answering: every node sees it from the next request on.
    pub async fn user_changed(&self, user_id: &str) {
        self.forget_user(user_id);
        self.bump(user_id).await;
    }

    /// Call after committing a session's revocation, before answering;
    /// `user_id` when known (else it is looked up, only when shared).
    pub async fn session_revoked(&self, db: &Db, session_id: &str, user_id: Option<&str>) {
        self.forget_session(session_id);
        if !self.is_shared() {
            return;
        }
        let owner = match user_id {
            Some(u) => Some(u.to_owned()),
            None => session::Entity::find_by_id(session_id)
                .one(db.read())
                .await
                .ok()
                .flatten()
                .map(|s| s.user_id),
        };
        if let Some(u) = owner {
            self.bump(&u).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: &str) -> Arc<user::Model> {
        let now = Utc::now();
        Arc::new(user::Model {
            id: id.to_owned(),
            username: "u".into(),
            username_key: "u".into(),
            email: "u@example.com".into(),
            email_key: "u@example.com".into(),
            slug: "u".into(),
            role: "user".into(),
            password_hash: String::new(),
            two_factor: false,
            totp_secret: None,
            totp_pending: None,
            totp_last_step: 0,
            email_verified: false,
            is_banned: false,
            banned_until: None,
            streamer_mode: false,
            notify_weekly_goals: true,
            weekly_mail_week: None,
            revision: 0,
            created_at: now,
            updated_at: now,
        })
    }

    fn later() -> DateTime<Utc> {
        Utc::now() + chrono::Duration::hours(1)
    }

    #[test]
    fn a_cached_session_is_served_until_invalidated() {
        let c = SessionCache::new(Duration::from_secs(60), None);
        c.insert("s1", user("u1"), later(), c.epoch(), None);
        assert!(c.get("s1", "u1").is_some());
        assert!(c.get("s1", "u2").is_none(), "another user's claim");
        c.forget_session("s1");
        assert!(c.get("s1", "u1").is_none());
        c.insert("s2", user("u1"), later(), c.epoch(), None);
        c.forget_user("u1");
        assert!(c.get("s2", "u1").is_none());
    }

    #[test]
    fn a_read_that_raced_an_invalidation_is_not_cached() {
        let c = SessionCache::new(Duration::from_secs(60), None);
        let epoch = c.epoch();
        c.forget_user("u1");
        c.insert("s1", user("u1"), later(), epoch, None);
        assert!(c.get("s1", "u1").is_none());
    }

    #[test]
    fn entries_expire_with_the_ttl_or_the_session() {
        let c = SessionCache::new(Duration::from_millis(20), None);
        c.insert("s1", user("u1"), later(), c.epoch(), None);
        std::thread::sleep(Duration::from_millis(30));
        assert!(c.get("s1", "u1").is_none());
        let c = SessionCache::new(Duration::from_secs(60), None);
        c.insert(
            "s1",
            user("u1"),
            Utc::now() - chrono::Duration::seconds(1),
            c.epoch(),
            None,
        );
        assert!(c.get("s1", "u1").is_none());
        let off = SessionCache::new(Duration::ZERO, None);
        off.insert("s1", user("u1"), later(), off.epoch(), None);
        assert!(off.get("s1", "u1").is_none());
    }
}
