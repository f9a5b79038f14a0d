//! The runtime lag probe: what happens before a request's service is
//! called (its bytes waiting in the socket while every thread is busy) is
//! outside any request's timing (`super::timing`); a timer that should fire
//! every 10 ms, whose lateness is the time a task ready to run could not,
//! shows it.

use std::time::{Duration, Instant};

/// Every 10 ms, how late the runtime ran a timer: the time a task ready to
/// run waited for a thread. Recorded as `keel_runtime_lag_seconds`; a lag
/// of `limit` or more is logged at WARN. Runs until `stop`.
pub async fn probe(limit: Duration, stop: tokio_util::sync::CancellationToken) {
    const EVERY: Duration = Duration::from_millis(10);
    loop {
        let asked = Instant::now();
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(EVERY) => {}
        }
        let lag = asked.elapsed().saturating_sub(EVERY);
        metrics::histogram!("keel_runtime_lag_seconds").record(lag.as_secs_f64());
        if lag >= limit {
            tracing::warn!(
                lag_ms = u64::try_from(lag.as_millis()).unwrap_or(u64::MAX),
                "runtime lag: a ready task waited this long for a thread"
            );
        }
    }
}
