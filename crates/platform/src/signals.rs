//! SIGINT and SIGTERM, the two ways a process is asked to stop.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// SIGINT and SIGTERM, registered when this is made rather than when
/// first awaited: a signal that arrives between start-up and the first
/// wait is kept for that wait instead of killing the process (the
/// default action). Make it before telling anyone the process is up.
pub struct ShutdownSignals {
    interrupt: Option<Signal>,
    terminate: Option<Signal>,
}

impl ShutdownSignals {
    pub fn listen() -> Self {
        let register = |kind: SignalKind, name: &str| match signal(kind) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for {name}");
                None
            }
        };
        Self {
            interrupt: register(SignalKind::interrupt(), "SIGINT"),
            terminate: register(SignalKind::terminate(), "SIGTERM"),
        }
    }

    /// The next SIGINT or SIGTERM (each one is seen once).
    pub async fn next(&mut self) {
        tokio::select! {
            () = recv(self.interrupt.as_mut()) => {}
            () = recv(self.terminate.as_mut()) => {}
        }
    }
}

async fn recv(signal: Option<&mut Signal>) {
    match signal {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}
