//! The running process: its listeners, the job worker and background
//! tasks, and how it stops. A stop is asked for (a signal, or a test) and
//! then drained: `/readyz` answers 503 `draining` at once while every
//! request is still served for `KEEL_SHUTDOWN_DRAIN_SECS` (a second ask
//! skips the rest), then the listeners stop accepting, requests in flight
//! finish within the grace, and the background tasks finish what they hold.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use keel_platform::Platform;
use keel_platform::http::health::Draining;
use keel_platform::signals::ShutdownSignals;
use keel_platform::tasks::Tasks;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// A service that is up.
#[derive(Debug, Clone)]
pub struct Listening {
    pub service: &'static str,
    pub addr: SocketAddr,
    /// `http://<addr><base path>`
    pub base_url: String,
}

/// Why a task of the process stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}: {1}")]
    Serve(&'static str, std::io::Error),
    #[error("a task panicked: {0}")]
    Panicked(String),
}

/// The running process: listeners, the job worker, background tasks, and
/// the way to stop them.
pub struct Running {
    pub platform: Platform,
    pub listening: Vec<Listening>,
    pub metrics_addr: SocketAddr,
    pub(crate) shutdown: CancellationToken,
    pub(crate) servers: JoinSet<Result<(), RunError>>,
    pub(crate) tasks: Tasks,
    /// Asks to stop: the first one drains, a second skips the drain.
    pub(crate) stops: Arc<Notify>,
}

impl Running {
    /// The base URL of a running service.
    pub fn url(&self, service: &str) -> Option<&str> {
        self.listening
            .iter()
            .find(|l| l.service == service)
            .map(|l| l.base_url.as_str())
    }

    /// Stops at once, without the drain: the listeners stop accepting
    /// and requests in flight finish within the grace.
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }

    /// Asks the process to stop as a SIGTERM does: the drain, then the
    /// shutdown (a second ask during the drain skips the rest of it).
    pub fn stop(&self) {
        self.stops.notify_one();
    }

    /// SIGINT and SIGTERM ask to stop (see [`stop`](Self::stop)). Listen
    /// for them before telling anyone the process is up: a signal that
    /// arrives before the handlers are registered would kill the process
    /// without a drain.
    pub fn stop_on(&self, mut signals: ShutdownSignals) {
        let stops = self.stops.clone();
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = signals.next() => stops.notify_one(),
                    () = shutdown.cancelled() => return,
                }
            }
        });
    }

    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// The process's background tasks.
    pub fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// Waits until the listeners and the job worker have stopped, then
    /// lets the background tasks finish what they hold; the first failure,
    /// if any. A listener that stops on its own stops the others too.
    pub async fn wait(mut self) -> Result<(), RunError> {
        let mut first_err = None;
        while let Some(joined) = self.servers.join_next().await {
            let result = joined
                .map_err(|e| RunError::Panicked(e.to_string()))
                .and_then(|r| r);
            if !self.shutdown.is_cancelled() {
                tracing::error!(?result, "a task stopped on its own; shutting down");
                self.shutdown.cancel();
            }
            if let (Err(e), None) = (result, &first_err) {
                first_err = Some(e);
            }
        }
        self.tasks
            .shutdown(self.platform.config.http.shutdown_grace)
            .await;
        self.platform.db.clone().close().await;
        first_err.map_or(Ok(()), Err)
    }
}

/// Waits for the first ask to stop, drains, then shuts down; ends with the
/// process's shutdown whichever comes first.
pub(crate) async fn stopper(
    stops: Arc<Notify>,
    shutdown: CancellationToken,
    draining: Draining,
    drain: Duration,
) {
    tokio::select! {
        () = stops.notified() => {}
        () = shutdown.cancelled() => return,
    }
    if !drain.is_zero() {
        // Load balancers see /readyz fail and stop sending requests,
        // which are all still served meanwhile.
        draining.start();
        tracing::info!(
            ?drain,
            "draining: /readyz answers 503 while requests are still served (a second signal stops at once)"
        );
        tokio::select! {
            () = tokio::time::sleep(drain) => {}
            () = stops.notified() => {}
            () = shutdown.cancelled() => {}
        }
    }
    tracing::info!("shutting down");
    shutdown.cancel();
}
