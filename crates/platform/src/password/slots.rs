//! The password-hashing slots, shared fairly between lanes (a service's
//! sign-ins): at most one hash per CPU at a time, and when a slot frees
//! it goes to the next lane in turn that has someone waiting, not to
//! whoever queued first. A flood of sign-ins on one service then takes
//! its share of the CPUs, and another service's sign-ins wait for at most
//! one turn of each busy lane, not for the whole flood.
//!
//! Hand-written: tokio's `Semaphore` is one first-come queue; no
//! maintained crate offers a semaphore with per-key round-robin hand-off.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, OnceLock};

use tokio::sync::oneshot;

/// At most this many may wait in one lane; more are turned away at once
/// (a flood must not hold unbounded memory while it waits).
pub const MAX_WAITING: usize = 256;

/// A lane's queue was full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many password checks are waiting in {0}")]
pub struct Crowded(pub &'static str);

pub struct FairSlots {
    state: Mutex<State>,
}

struct State {
    free: usize,
    lanes: Vec<(&'static str, VecDeque<oneshot::Sender<Slot>>)>,
    /// The lane served last; the hand-off starts after it.
    last: usize,
}

/// One hashing slot, returned (and handed on) when dropped.
pub struct Slot {
    pool: &'static FairSlots,
    live: bool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if self.live {
            self.live = false;
            self.pool.release();
        }
    }
}

/// The process's slots: one per CPU.
pub fn slots() -> &'static FairSlots {
    static SLOTS: OnceLock<FairSlots> = OnceLock::new();
    SLOTS.get_or_init(|| {
        FairSlots::new(std::thread::available_parallelism().map_or(2, std::num::NonZero::get))
    })
}

impl FairSlots {
    pub fn new(n: usize) -> Self {
        Self {
            state: Mutex::new(State {
                free: n.max(1),
                lanes: Vec::new(),
                last: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A slot for `lane`: at once when one is free and nobody waits, else
    /// in `lane`'s turn.
    pub async fn acquire(&'static self, lane: &'static str) -> Result<Slot, Crowded> {
        let rx = {
            let mut s = self.lock();
            let nobody_waits = s.lanes.iter().all(|(_, q)| q.is_empty());
            if s.free > 0 && nobody_waits {
                s.free -= 1;
                return Ok(Slot {
                    pool: self,
                    live: true,
                });
            }
            let queue = match s.lanes.iter().position(|(name, _)| *name == lane) {
                Some(i) => &mut s.lanes[i].1,
                None => {
                    s.lanes.push((lane, VecDeque::new()));
                    let last = s.lanes.len() - 1;
                    &mut s.lanes[last].1
                }
            };
            queue.retain(|tx| !tx.is_closed());
            if queue.len() >= MAX_WAITING {
                return Err(Crowded(lane));
            }
            let (tx, rx) = oneshot::channel();
            queue.push_back(tx);
            rx
        };
        // The sender is only dropped after a slot went through it.
        rx.await.map_err(|_| Crowded(lane))
    }

    /// Hands a freed slot to the next lane in turn with a live waiter, or
    /// puts it back.
    fn release(&'static self) {
        loop {
            let tx = {
                let mut s = self.lock();
                let n = s.lanes.len();
                let next = (1..=n)
                    .map(|k| (s.last + k) % n)
                    .find(|&i| s.lanes[i].1.iter().any(|tx| !tx.is_closed()));
                let Some(i) = next else {
                    s.free += 1;
                    for (_, q) in &mut s.lanes {
                        q.clear();
                    }
                    return;
                };
                s.last = i;
                let q = &mut s.lanes[i].1;
                q.retain(|tx| !tx.is_closed());
                q.pop_front()
            };
            let Some(tx) = tx else { continue };
            match tx.send(Slot {
                pool: self,
                live: true,
            }) {
                Ok(()) => return,
                // Its waiter gave up meanwhile: the next one.
                Err(mut slot) => slot.live = false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leak(n: usize) -> &'static FairSlots {
        Box::leak(Box::new(FairSlots::new(n)))
    }

    #[tokio::test]
    async fn a_freed_slot_goes_to_the_next_lane_in_turn_not_to_the_first_queued() {
        let pool = leak(1);
        let held = pool.acquire("svc").await.ok();
        let order = std::sync::Arc::new(Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        // svc queues five, then accounts one.
        for (i, lane) in ["svc", "svc", "svc", "svc", "svc", "accounts"]
            .into_iter()
            .enumerate()
        {
            let order = order.clone();
            waiters.push(tokio::spawn(async move {
                let slot = pool.acquire(lane).await;
                order
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push((i, lane));
                drop(slot);
            }));
            tokio::task::yield_now().await;
        }
        drop(held);
        for w in waiters {
            let _ = w.await;
        }
        let order = order
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let accounts_at = order.iter().position(|(_, l)| *l == "accounts");
        assert!(
            accounts_at.is_some_and(|p| p <= 1),
            "accounts waited behind the flood: {order:?}"
        );
        assert_eq!(order.len(), 6);
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_does_not_lose_the_slot() {
        let pool = leak(1);
        let held = pool.acquire("a").await.ok();
        let gives_up = tokio::spawn(pool.acquire("a"));
        tokio::task::yield_now().await;
        gives_up.abort();
        let _ = gives_up.await;
        drop(held);
        let again =
            tokio::time::timeout(std::time::Duration::from_secs(5), pool.acquire("b")).await;
        assert!(matches!(again, Ok(Ok(_))));
    }

    #[tokio::test]
    async fn a_full_lane_is_turned_away_at_once() {
        let pool = leak(1);
        let _held = pool.acquire("a").await.ok();
        let mut waiting = Vec::new();
        for _ in 0..MAX_WAITING {
            waiting.push(tokio::spawn(pool.acquire("a")));
        }
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(pool.acquire("a").await.err(), Some(Crowded("a")));
        for w in waiting {
            w.abort();
        }
    }
}
