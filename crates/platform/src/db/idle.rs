//! Connections kept for reuse outside a pool (inline SQLite reads, short
//! PostgreSQL reads), each closed once it has been idle for the database's
//! idle time (`KEEL_DB_IDLE_SECS`), as the pool closes its own.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Idle connections, the most recently used last, each with when it was
/// put back.
pub(crate) struct Idle<T> {
    list: Mutex<Vec<(T, Instant)>>,
    max: usize,
}

impl<T> Idle<T> {
    /// Keeping at most `max`.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            list: Mutex::new(Vec::new()),
            max,
        }
    }

    fn list(&self) -> MutexGuard<'_, Vec<(T, Instant)>> {
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The most recently used idle connection.
    pub(crate) fn take(&self) -> Option<T> {
        self.list().pop().map(|(conn, _)| conn)
    }

    /// Keeps `conn` for the next taker, or drops it when `max` are kept.
    pub(crate) fn put(&self, conn: T) {
        let mut list = self.list();
        if list.len() < self.max {
            list.push((conn, Instant::now()));
        }
    }

    /// Every idle connection, taken (to close them).
    pub(crate) fn drain(&self) -> Vec<T> {
        std::mem::take(&mut *self.list())
            .into_iter()
            .map(|(conn, _)| conn)
            .collect()
    }

    /// The connections idle for `longer_than` or more, taken (to close
    /// them); the others stay.
    pub(crate) fn expired(&self, longer_than: Duration) -> Vec<T> {
        let mut list = self.list();
        // The least recently used are first.
        let fresh = list
            .iter()
            .position(|(_, at)| at.elapsed() < longer_than)
            .unwrap_or(list.len());
        list.drain(..fresh).map(|(conn, _)| conn).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_idle_too_long_are_taken_and_the_rest_stay() {
        let idle = Idle::new(8);
        idle.put(1);
        idle.put(2);
        assert_eq!(idle.expired(Duration::from_secs(60)), Vec::<i32>::new());
        assert_eq!(idle.expired(Duration::ZERO), vec![1, 2]);
        assert_eq!(idle.take(), None);
        idle.put(3);
        assert_eq!(idle.take(), Some(3));
    }
}
