//! Connections kept for reuse outside a pool (inline SQLite reads, short
//! PostgreSQL reads).

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Idle connections, the most recently used first.
pub(crate) struct Idle<T> {
    list: Mutex<Vec<T>>,
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

    fn list(&self) -> MutexGuard<'_, Vec<T>> {
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn take(&self) -> Option<T> {
        self.list().pop()
    }

    /// Keeps `conn` for the next taker, or drops it when `max` are kept.
    pub(crate) fn put(&self, conn: T) {
        let mut list = self.list();
        if list.len() < self.max {
            list.push(conn);
        }
    }

    pub(crate) fn drain(&self) -> Vec<T> {
        std::mem::take(&mut *self.list())
    }
}
