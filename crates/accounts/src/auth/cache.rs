//! A short-lived in-process cache of live sessions and their users, so a
//! request's authentication usually costs no database read.
//!
//! Every change this process makes to a session or a user invalidates the
//! entries it affects, after it commits; an epoch counter keeps a read that
//! raced with an invalidation from caching what it read. Entries also expire
//! after the configured time, which bounds how late a change made by another
//! process (or straight in the database) is seen. Off by default on
//! PostgreSQL, where several nodes are the norm (docs/accounts.md).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::entity::user;

const CAPACITY: usize = 100_000;

struct Entry {
    user: Arc<user::Model>,
    session_expires: DateTime<Utc>,
    cached_at: Instant,
}

#[derive(Default)]
struct Inner {
    epoch: u64,
    entries: HashMap<String, Entry>,
}

pub struct SessionCache {
    ttl: Duration,
    inner: Mutex<Inner>,
}

impl SessionCache {
    /// A cache keeping entries for `ttl`; zero disables it.
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    /// The user of live session `session_id`, if cached and fresh.
    pub fn get(&self, session_id: &str, user_id: &str) -> Option<Arc<user::Model>> {
        if !self.enabled() {
            return None;
        }
        let inner = self.lock();
        let e = inner.entries.get(session_id)?;
        let fresh = e.cached_at.elapsed() < self.ttl && e.session_expires > Utc::now();
        (fresh && e.user.id == user_id).then(|| e.user.clone())
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
    ) {
        if !self.enabled() {
            return;
        }
        let mut inner = self.lock();
        if inner.epoch != epoch {
            return;
        }
        if inner.entries.len() >= CAPACITY {
            let ttl = self.ttl;
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
            streamer_mode: false,
            notify_weekly_goals: true,
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
        let c = SessionCache::new(Duration::from_secs(60));
        c.insert("s1", user("u1"), later(), c.epoch());
        assert!(c.get("s1", "u1").is_some());
        assert!(c.get("s1", "u2").is_none(), "another user's claim");
        c.forget_session("s1");
        assert!(c.get("s1", "u1").is_none());
        c.insert("s2", user("u1"), later(), c.epoch());
        c.forget_user("u1");
        assert!(c.get("s2", "u1").is_none());
    }

    #[test]
    fn a_read_that_raced_an_invalidation_is_not_cached() {
        let c = SessionCache::new(Duration::from_secs(60));
        let epoch = c.epoch();
        c.forget_user("u1");
        c.insert("s1", user("u1"), later(), epoch);
        assert!(c.get("s1", "u1").is_none());
    }

    #[test]
    fn entries_expire_with_the_ttl_or_the_session() {
        let c = SessionCache::new(Duration::from_millis(20));
        c.insert("s1", user("u1"), later(), c.epoch());
        std::thread::sleep(Duration::from_millis(30));
        assert!(c.get("s1", "u1").is_none());
        let c = SessionCache::new(Duration::from_secs(60));
        c.insert(
            "s1",
            user("u1"),
            Utc::now() - chrono::Duration::seconds(1),
            c.epoch(),
        );
        assert!(c.get("s1", "u1").is_none());
        let off = SessionCache::new(Duration::ZERO);
        off.insert("s1", user("u1"), later(), off.epoch());
        assert!(off.get("s1", "u1").is_none());
    }
}
