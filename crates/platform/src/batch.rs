//! Group commit: many requests' writes in one transaction.
//!
//! A `Batcher` owns a writer task (in the server's [`Tasks`]). Callers hand
//! it items; it takes every item waiting (up to a maximum) and writes them
//! together, then answers each caller with its own result. On SQLite, where
//! one connection writes at a time, this turns many small transactions into
//! few larger ones; on PostgreSQL it saves commits (and their fsyncs).
//!
//! A write that fails or panics fails the items of its batch, and the
//! writer goes on with the next. On shutdown (after the listeners stopped)
//! the writer writes what is queued and stops.
//!
//! Each batch is counted (`keel_batch_items`, `keel_batch_write_duration_seconds`,
//! by writer). With slow requests timed (`KEEL_SLOW_REQUEST_MS`), a
//! request's wait is split into the batch before its own and its own
//! batch's write, and a batch as slow as the threshold is logged with
//! where its time went ([`crate::observe::tally::timed_batch`]).

use futures::FutureExt;
use std::future::Future;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

use crate::failure::panic_text;
use crate::failure::{Cause, chain};
use crate::observe::tally::{self as timing, Phase};
use crate::tasks::Tasks;

/// Why an item was not written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BatchError {
    /// The batch's write failed; every item of the batch shares its cause.
    #[error("the batched write failed")]
    Write(#[source] SharedCause),
    #[error("the batch writer has stopped")]
    Stopped,
}

/// A cause shared by every caller of a failed batch: it reads as the cause
/// itself (its text and its sources), so a logged chain shows it once.
#[derive(Debug, Clone)]
pub struct SharedCause(std::sync::Arc<dyn std::error::Error + Send + Sync + 'static>);

impl SharedCause {
    pub(crate) fn new(cause: Cause) -> Self {
        Self(std::sync::Arc::from(cause))
    }

    /// The cause (for classifying it: see `crate::outage`).
    pub fn get(&self) -> &(dyn std::error::Error + 'static) {
        &*self.0
    }
}

impl std::fmt::Display for SharedCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SharedCause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Two causes are the same when they read the same (for tests).
impl PartialEq for SharedCause {
    fn eq(&self, other: &Self) -> bool {
        chain(self.get()) == chain(other.get())
    }
}

/// An item's result, and when its batch's write began.
type Reply<R> = oneshot::Sender<(Result<R, BatchError>, Instant)>;

/// An item as the writer gets it.
struct Queued<T, R> {
    item: T,
    reply: Option<Reply<R>>,
    /// The slow-request threshold, when the request that sent it is timed.
    limit: Option<Duration>,
}

/// The handle callers use; cheap to clone.
pub struct Batcher<T, R> {
    tx: mpsc::Sender<Queued<T, R>>,
}

impl<T, R> Clone for Batcher<T, R> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
        }
    }
}

impl<T: Send + 'static, R: Send + 'static> Batcher<T, R> {
    /// Starts the writer as one of `tasks`. `write` gets the waiting items
    /// in arrival order and returns one result per item, in that order (or
    /// one error for all).
    pub fn start<F, Fut, E>(tasks: &Tasks, name: &'static str, max_batch: usize, write: F) -> Self
    where
        F: Fn(Vec<T>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<R>, E>> + Send + 'static,
        E: Into<Cause> + 'static,
    {
        let max_batch = max_batch.max(1);
        let (tx, rx) = mpsc::channel(max_batch * 8);
        let token = tasks.token();
        tasks.spawn(name, run(rx, token, name, max_batch, write));
        Self { tx }
    }

    /// [`Self::start`] with a value each batch's write gets its own clone of
    /// (the database handle, usually).
    pub fn start_with<C, F, Fut, E>(
        tasks: &Tasks,
        name: &'static str,
        max_batch: usize,
        with: C,
        write: F,
    ) -> Self
    where
        C: Clone + Send + Sync + 'static,
        F: Fn(C, Vec<T>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<R>, E>> + Send + 'static,
        E: Into<Cause> + 'static,
    {
        Self::start(tasks, name, max_batch, move |items| {
            write(with.clone(), items)
        })
    }

    /// Writes `item` and waits for its commit.
    pub async fn submit(&self, item: T) -> Result<R, BatchError> {
        let (reply, answer) = oneshot::channel();
        let limit = timing::limit();
        let sent = limit.map(|_| Instant::now());
        self.tx
            .send(Queued {
                item,
                reply: Some(reply),
                limit,
            })
            .await
            .map_err(|_| BatchError::Stopped)?;
        let (result, began) = answer.await.map_err(|_| BatchError::Stopped)?;
        if let Some(sent) = sent {
            timing::record(Phase::Queued, began.saturating_duration_since(sent));
            timing::record(Phase::Batch, began.elapsed());
        }
        result
    }

    /// Queues `item` without waiting for it to be written.
    pub async fn enqueue(&self, item: T) -> Result<(), BatchError> {
        self.tx
            .send(Queued {
                item,
                reply: None,
                limit: timing::limit(),
            })
            .await
            .map_err(|_| BatchError::Stopped)
    }
}

async fn run<T, R, F, Fut, E>(
    mut rx: mpsc::Receiver<Queued<T, R>>,
    token: tokio_util::sync::CancellationToken,
    name: &'static str,
    max: usize,
    write: F,
) where
    F: Fn(Vec<T>) -> Fut,
    Fut: Future<Output = Result<Vec<R>, E>>,
    E: Into<Cause>,
{
    let mut closing = false;
    loop {
        let next = tokio::select! {
            next = rx.recv() => next,
            () = token.cancelled(), if !closing => {
                // The listeners have stopped: write what is queued, then stop.
                rx.close();
                closing = true;
                continue;
            }
        };
        let Some(first) = next else { break };
        let mut batch = vec![first];
        while batch.len() < max {
            match rx.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let limit = batch.iter().filter_map(|q| q.limit).min();
        let (items, replies): (Vec<T>, Vec<Option<Reply<R>>>) =
            batch.into_iter().map(|q| (q.item, q.reply)).unzip();
        let n = items.len();
        let began = Instant::now();
        let written = timing::timed_batch(
            limit,
            name,
            n,
            std::panic::AssertUnwindSafe(write(items)).catch_unwind(),
        )
        .await;
        metrics::histogram!("keel_batch_items", "writer" => name).record(n as f64);
        metrics::histogram!("keel_batch_write_duration_seconds", "writer" => name)
            .record(began.elapsed().as_secs_f64());
        match written {
            Ok(Ok(results)) if results.len() == n => {
                for (reply, result) in replies.into_iter().zip(results) {
                    if let Some(reply) = reply {
                        let _ = reply.send((Ok(result), began));
                    }
                }
            }
            Ok(Ok(results)) => {
                let e = format!(
                    "the batch writer returned {} results for {n} items",
                    results.len()
                );
                tracing::error!("{e}");
                answer_all(replies, e.into(), began);
            }
            Ok(Err(e)) => {
                let e = e.into();
                tracing::warn!(error = %chain(e.as_ref()), items = n, "a batched write failed");
                answer_all(replies, e, began);
            }
            Err(panic) => {
                let e = format!("the batched write panicked: {}", panic_text(panic.as_ref()));
                tracing::error!(items = n, "{e}");
                answer_all(replies, e.into(), began);
            }
        }
    }
}

fn answer_all<R>(replies: Vec<Option<Reply<R>>>, e: Cause, began: Instant) {
    let shared = SharedCause::new(e);
    for reply in replies.into_iter().flatten() {
        let _ = reply.send((Err(BatchError::Write(shared.clone())), began));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[tokio::test]
    async fn items_written_together_get_their_own_results() {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let seen = sizes.clone();
        let b: Batcher<u32, u32> =
            Batcher::start(&Tasks::new(), "test", 8, move |items: Vec<u32>| {
                seen.lock().unwrap().push(items.len());
                async move { Ok::<_, std::io::Error>(items.into_iter().map(|i| i * 10).collect()) }
            });
        let mut tasks = Vec::new();
        for i in 0..20u32 {
            let b = b.clone();
            tasks.push(tokio::spawn(async move { b.submit(i).await }));
        }
        for (i, t) in tasks.into_iter().enumerate() {
            assert_eq!(t.await.unwrap(), Ok(u32::try_from(i).unwrap() * 10));
        }
        let sizes = sizes.lock().unwrap();
        assert_eq!(sizes.iter().sum::<usize>(), 20);
        assert!(sizes.iter().all(|s| *s <= 8));
    }

    #[tokio::test]
    async fn a_timed_request_learns_how_long_it_waited_for_the_batch_before_and_its_own() {
        let started = Arc::new(tokio::sync::Notify::new());
        let writing = started.clone();
        let b: Batcher<u32, u32> =
            Batcher::start(&Tasks::new(), "test", 8, move |items: Vec<u32>| {
                let writing = writing.clone();
                async move {
                    writing.notify_one();
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    Ok::<_, std::io::Error>(items)
                }
            });
        let limit = Duration::from_millis(1);
        let first = tokio::spawn({
            let b = b.clone();
            async move { timing::tallied(limit, b.submit(1)).await }
        });
        // The second arrives while the first's batch is being written.
        started.notified().await;
        let (second, phases) = timing::tallied(limit, b.submit(2)).await;
        assert_eq!(second, Ok(2));
        assert!(
            phases[Phase::Queued as usize] > Duration::ZERO,
            "{phases:?}"
        );
        assert!(
            phases[Phase::Batch as usize] >= Duration::from_millis(20),
            "{phases:?}"
        );
        let (first, phases) = first.await.unwrap();
        assert_eq!(first, Ok(1));
        assert!(
            phases[Phase::Batch as usize] >= Duration::from_millis(20),
            "{phases:?}"
        );
    }

    #[tokio::test]
    async fn a_failed_write_fails_every_item_of_the_batch() {
        let b: Batcher<u32, ()> =
            Batcher::start(&Tasks::new(), "test", 8, |_items: Vec<u32>| async {
                Err(std::io::Error::other("disk full"))
            });
        let e = b.submit(1).await.err();
        assert_eq!(
            e.as_ref().map(|e| chain(e)),
            Some("the batched write failed: disk full".to_owned())
        );
    }

    #[tokio::test]
    async fn a_write_that_panics_fails_its_batch_and_the_writer_goes_on() {
        let tasks = Tasks::new();
        let b: Batcher<u32, u32> =
            Batcher::start(&tasks, "test", 8, |items: Vec<u32>| async move {
                assert!(!items.contains(&13), "unlucky");
                Ok::<_, std::io::Error>(items)
            });
        assert!(matches!(b.submit(13).await, Err(BatchError::Write(_))));
        assert_eq!(b.submit(7).await, Ok(7), "the next batch is written");
        assert!(tasks.health().is_ok());
    }

    #[tokio::test]
    async fn on_shutdown_what_is_queued_is_written_then_the_writer_stops() {
        let tasks = Tasks::new();
        let written = Arc::new(Mutex::new(Vec::new()));
        let seen = written.clone();
        let b: Batcher<u32, ()> = Batcher::start(&tasks, "test", 8, move |items: Vec<u32>| {
            let seen = seen.clone();
            async move {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                seen.lock().unwrap().extend(items.iter().map(|_| 1));
                Ok::<_, std::io::Error>(items.into_iter().map(|_| ()).collect())
            }
        });
        for i in 0..5 {
            b.enqueue(i).await.unwrap();
        }
        tasks.shutdown(std::time::Duration::from_secs(2)).await;
        assert_eq!(written.lock().unwrap().len(), 5);
        assert_eq!(b.enqueue(9).await, Err(BatchError::Stopped));
    }
}
