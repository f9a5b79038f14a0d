//! Group commit: many requests' writes in one transaction.
//!
//! A `Batcher` owns a writer task. Callers hand it items; it takes every
//! item waiting (up to a maximum) and writes them together, then answers
//! each caller with its own result. On SQLite, where one connection writes
//! at a time, this turns many small transactions into few larger ones; on
//! PostgreSQL it saves commits (and their fsyncs).

use std::future::Future;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

type Reply<R> = oneshot::Sender<Result<R, String>>;

/// The handle callers use; cheap to clone. The writer stops when every
/// handle is gone.
pub struct Batcher<T, R> {
    tx: mpsc::Sender<(T, Option<Reply<R>>)>,
}

impl<T, R> Clone for Batcher<T, R> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
        }
    }
}

impl<T: Send + 'static, R: Send + 'static> Batcher<T, R> {
    /// Starts the writer. `write` gets the waiting items in arrival order
    /// and returns one result per item, in that order (or one error for all).
    pub fn start<F, Fut>(max_batch: usize, write: F) -> Self
    where
        F: Fn(Vec<T>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<R>, String>> + Send + 'static,
    {
        let max_batch = max_batch.max(1);
        let (tx, rx) = mpsc::channel(max_batch * 8);
        tokio::spawn(run(rx, max_batch, Arc::new(write)));
        Self { tx }
    }

    /// Writes `item` and waits for its commit.
    pub async fn submit(&self, item: T) -> Result<R, String> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send((item, Some(reply)))
            .await
            .map_err(|_| "the batch writer has stopped".to_owned())?;
        answer
            .await
            .map_err(|_| "the batch writer dropped the item".to_owned())?
    }

    /// Queues `item` without waiting for it to be written.
    pub async fn enqueue(&self, item: T) -> Result<(), String> {
        self.tx
            .send((item, None))
            .await
            .map_err(|_| "the batch writer has stopped".to_owned())
    }
}

async fn run<T, R, F, Fut>(mut rx: mpsc::Receiver<(T, Option<Reply<R>>)>, max: usize, write: Arc<F>)
where
    F: Fn(Vec<T>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<R>, String>> + Send + 'static,
{
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < max {
            match rx.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let (items, replies): (Vec<T>, Vec<Option<Reply<R>>>) = batch.into_iter().unzip();
        let n = items.len();
        match write(items).await {
            Ok(results) if results.len() == n => {
                for (reply, result) in replies.into_iter().zip(results) {
                    if let Some(reply) = reply {
                        let _ = reply.send(Ok(result));
                    }
                }
            }
            Ok(results) => {
                let e = format!(
                    "the batch writer returned {} results for {n} items",
                    results.len()
                );
                tracing::error!("{e}");
                answer_all(replies, &e);
            }
            Err(e) => {
                tracing::error!(error = %e, items = n, "a batched write failed");
                answer_all(replies, &e);
            }
        }
    }
}

fn answer_all<R>(replies: Vec<Option<Reply<R>>>, e: &str) {
    for reply in replies.into_iter().flatten() {
        let _ = reply.send(Err(e.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[tokio::test]
    async fn items_written_together_get_their_own_results() {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let seen = sizes.clone();
        let b: Batcher<u32, u32> = Batcher::start(8, move |items: Vec<u32>| {
            seen.lock().unwrap().push(items.len());
            async move { Ok(items.into_iter().map(|i| i * 10).collect()) }
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
    async fn a_failed_write_fails_every_item_of_the_batch() {
        let b: Batcher<u32, ()> =
            Batcher::start(8, |_items: Vec<u32>| async { Err("disk full".to_owned()) });
        assert_eq!(b.submit(1).await, Err("disk full".to_owned()));
    }
}
