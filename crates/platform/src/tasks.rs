//! The server's background tasks (group-commit writers, schedulers, caches
//! refreshing themselves): every one is spawned here, so the server owns
//! it. A task that panics is logged and, when it was marked as such,
//! restarted; a task that dies for good makes `/readyz` fail, naming it,
//! instead of silently breaking every later request. On shutdown the
//! server stops its listeners first, then cancels [`Tasks::token`] and
//! waits for the tasks to finish what they hold.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::failure::panic_text;

/// The background tasks of one process; cheap to clone.
#[derive(Clone, Default)]
pub struct Tasks {
    tracker: TaskTracker,
    token: CancellationToken,
    dead: Arc<Mutex<Vec<&'static str>>>,
}

impl Tasks {
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancelled when the tasks should finish up and stop.
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// Runs `task` once. If it panics, it is logged and reported dead.
    pub fn spawn<F>(&self, name: &'static str, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let dead = self.dead.clone();
        self.tracker.spawn(async move {
            if let Err(panic) = std::panic::AssertUnwindSafe(task).catch_unwind().await {
                tracing::error!(task = name, panic = %panic_text(panic.as_ref()), "a background task panicked and stopped");
                lock(&dead).push(name);
            }
        });
    }

    /// Runs the task `make` builds until it returns after [`Self::token`]
    /// is cancelled. If it panics, or returns before that, it is logged
    /// and started again after a pause (doubling up to 30 s).
    pub fn spawn_restarting<F, Fut>(&self, name: &'static str, make: F)
    where
        F: Fn() -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let token = self.token.clone();
        self.tracker.spawn(async move {
            let mut pause = Duration::from_millis(100);
            loop {
                let ended = std::panic::AssertUnwindSafe(make()).catch_unwind().await;
                if token.is_cancelled() {
                    return;
                }
                match ended {
                    Ok(()) => tracing::error!(task = name, "a background task stopped on its own; restarting it"),
                    Err(panic) => tracing::error!(task = name, panic = %panic_text(panic.as_ref()), "a background task panicked; restarting it"),
                }
                tokio::select! {
                    () = token.cancelled() => return,
                    () = tokio::time::sleep(pause) => {}
                }
                pause = (pause * 2).min(Duration::from_secs(30));
            }
        });
    }

    /// `Err` naming the tasks that died for good.
    pub fn health(&self) -> Result<(), crate::check::Unhealthy> {
        let dead = lock(&self.dead);
        if dead.is_empty() {
            Ok(())
        } else {
            Err(crate::check::Unhealthy::TasksStopped(dead.clone()))
        }
    }

    /// Cancels the token and waits for every task, at most `grace`.
    pub async fn shutdown(&self, grace: Duration) {
        self.token.cancel();
        self.tracker.close();
        if tokio::time::timeout(grace, self.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                running = self.tracker.len(),
                "shutdown grace elapsed; background tasks still running"
            );
        }
    }
}

fn lock<'a>(m: &'a Mutex<Vec<&'static str>>) -> std::sync::MutexGuard<'a, Vec<&'static str>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_task_that_panics_is_reported_dead() {
        let tasks = Tasks::new();
        assert!(tasks.health().is_ok());
        tasks.spawn("writer", async { panic!("boom") });
        tasks.shutdown(Duration::from_secs(1)).await;
        assert_eq!(
            tasks.health().map_err(|e| e.to_string()),
            Err("background task stopped: writer".to_owned())
        );
    }

    #[tokio::test]
    async fn a_restarting_task_comes_back_after_a_panic_and_stops_on_shutdown() {
        let tasks = Tasks::new();
        let runs = Arc::new(AtomicUsize::new(0));
        let seen = runs.clone();
        let token = tasks.token();
        tasks.spawn_restarting("ticker", move || {
            let (runs, token) = (seen.clone(), token.clone());
            async move {
                if runs.fetch_add(1, Ordering::SeqCst) == 0 {
                    panic!("first run fails");
                }
                token.cancelled().await;
            }
        });
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while runs.load(Ordering::SeqCst) < 2 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(runs.load(Ordering::SeqCst), 2, "restarted once");
        tasks.shutdown(Duration::from_secs(1)).await;
        assert!(tasks.health().is_ok(), "a restarting task is not dead");
    }
}
