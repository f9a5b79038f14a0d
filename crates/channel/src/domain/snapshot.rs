//! A value a node keeps in memory for at most `max_age`: when it is stale,
//! one caller refreshes it while the others answer from the old value (or,
//! before there is any, wait for the first). A change made on this node is
//! put in at once; other nodes see it when their copy goes stale.

use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

pub struct Snapshot<T> {
    max_age: Duration,
    slot: RwLock<Option<(Instant, Arc<T>)>>,
    refreshing: tokio::sync::Mutex<()>,
}

impl<T> Snapshot<T> {
    pub fn new(max_age: Duration) -> Self {
        Self {
            max_age,
            slot: RwLock::new(None),
            refreshing: tokio::sync::Mutex::new(()),
        }
    }

    fn current(&self) -> Option<(Instant, Arc<T>)> {
        self.slot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Keeps `value` as of now.
    pub fn put(&self, value: T) -> Arc<T> {
        let value = Arc::new(value);
        *self.slot.write().unwrap_or_else(PoisonError::into_inner) =
            Some((Instant::now(), value.clone()));
        value
    }

    /// The value kept, if it is younger than `max_age` (a fallback while
    /// it cannot be loaded).
    pub fn within(&self, max_age: Duration) -> Option<Arc<T>> {
        self.current()
            .filter(|(at, _)| at.elapsed() < max_age)
            .map(|(_, v)| v)
    }

    /// Forgets the value: the next caller loads it.
    pub fn invalidate(&self) {
        *self.slot.write().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The value, loading it with `load` when stale.
    pub async fn get<E, F, Fut>(&self, load: F) -> Result<Arc<T>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let current = self.current();
        if let Some((at, v)) = &current
            && at.elapsed() < self.max_age
        {
            return Ok(v.clone());
        }
        let _guard = match (self.refreshing.try_lock(), current) {
            (Ok(guard), _) => guard,
            // Someone is refreshing: answer from the old value meanwhile.
            (Err(_), Some((_, v))) => return Ok(v),
            // Nothing to answer with yet: wait for the first load.
            (Err(_), None) => {
                let guard = self.refreshing.lock().await;
                if let Some((at, v)) = self.current()
                    && at.elapsed() < self.max_age
                {
                    return Ok(v);
                }
                guard
            }
        };
        Ok(self.put(load().await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn a_fresh_value_is_not_loaded_again_and_a_stale_one_is() {
        let s = Snapshot::new(Duration::from_millis(50));
        let loads = AtomicUsize::new(0);
        let load = || async { Ok::<_, ()>(loads.fetch_add(1, Ordering::SeqCst)) };
        assert_eq!(*s.get(load).await.unwrap_or_default(), 0);
        assert_eq!(*s.get(load).await.unwrap_or_default(), 0);
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(*s.get(load).await.unwrap_or_default(), 1);
        s.invalidate();
        assert_eq!(*s.get(load).await.unwrap_or_default(), 2);
        s.put(7);
        assert_eq!(*s.get(load).await.unwrap_or_default(), 7);
    }

    #[tokio::test]
    async fn a_failed_load_keeps_nothing() {
        let s: Snapshot<u8> = Snapshot::new(Duration::from_secs(1));
        assert!(s.get(|| async { Err::<u8, _>("down") }).await.is_err());
        assert_eq!(
            *s.get(|| async { Ok::<_, ()>(3) }).await.unwrap_or_default(),
            3
        );
    }
}
