//! What a call costs, seen once, on the ground floor: every I/O call the
//! platform and the services make (a Redis command, an outbound request, a
//! mail handed to SMTP, a provider's client library) goes through [`call`],
//! which times it into the request's phase when the request is timed
//! (`KEEL_SLOW_REQUEST_MS`, [`tally`]) and runs it in its client span when
//! traces are on ([`trace`]), marking the span failed on an error. A
//! database statement, timed by SeaORM's callback or a short read, is
//! [`statement`]. Both halves are one check each when off.
//!
//! Nothing here imports the rest of the platform: the HTTP layer (the slow
//! request log, the server span), the database, the cache, the group
//! commit and the outbound client all stand on it.

pub mod answers;
pub mod tally;
pub mod trace;

use std::future::Future;
use std::time::Duration;

use tracing::Instrument;

pub use tally::{Phase, timed};

/// A call to make: the phase its time counts to, and its client span (or
/// none while traces are off).
pub struct Call {
    pub phase: Phase,
    pub span: tracing::Span,
}

impl Call {
    /// A Redis command (`GET`, `EVALSHA`, ...).
    pub fn redis(operation: &str) -> Self {
        Self {
            phase: Phase::Cache,
            span: trace::redis(operation),
        }
    }

    /// An outbound HTTP request (never its URL: credentials live in some).
    pub fn outbound(method: &http::Method, url: &url::Url) -> Self {
        Self {
            phase: Phase::Outbound,
            span: trace::outbound(method, url),
        }
    }

    /// A mail handed to the SMTP relay.
    pub fn smtp() -> Self {
        Self {
            phase: Phase::Outbound,
            span: trace::smtp(),
        }
    }

    /// A call through a provider's own client library (Discord's REST API).
    pub fn provider(name: &'static str, peer: &'static str) -> Self {
        Self {
            phase: Phase::Outbound,
            span: trace::provider_call(name, peer),
        }
    }
}

/// Makes `call`: `run` is given its span (to record what only the answer
/// tells, such as a status code) and its future is timed in the call's
/// phase inside that span; an error marks the span failed.
pub async fn call<T, E, Fut>(call: Call, run: impl FnOnce(&tracing::Span) -> Fut) -> Result<T, E>
where
    Fut: Future<Output = Result<T, E>>,
{
    let Call { phase, span } = call;
    let out = timed(phase, run(&span)).instrument(span.clone()).await;
    if out.is_err() {
        trace::failed(&span);
    }
    out
}

/// A database statement that ended after `elapsed`: its time in the
/// request's `Db` phase, and its client span under the current span.
pub fn statement(system: &'static str, sql: &str, elapsed: Duration, failed: bool) {
    tally::record(Phase::Db, elapsed);
    trace::statement(system, sql, elapsed, failed);
}

/// A short read (a statement outside SeaORM's executor) of `table` that
/// took `took` (the table's name is copied only for a span).
pub fn short_read(system: &'static str, table: &str, took: Duration) {
    tally::record(Phase::Db, took);
    if trace::enabled() {
        trace::record_statement(system, "SELECT", Some(table.to_owned()), took, false);
    }
}

/// Whether [`short_read`] would keep anything: the request is timed or
/// traces are on (else a short read need not read the clock).
pub fn watching() -> bool {
    tally::timing() || trace::enabled()
}
