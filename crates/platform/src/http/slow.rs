//! Slow requests (`KEEL_SLOW_REQUEST_MS`): off by default, and then no
//! request is timed. When set, each request is timed (`observe::tally`)
//! from the moment its service is called to the end of its answer's body,
//! and its time is split three ways:
//!
//! - `run`: its future running on a runtime thread (its own CPU, and any
//!   blocking call it makes, such as an inline SQLite read);
//! - `ready`: woken and waiting for a thread (other requests and background
//!   tasks ahead of it, or the OS running something else on the core);
//! - `wait`: the rest, waiting on something outside (the database, Redis,
//!   a provider, a timer).
//!
//! and, overlapping those, the phases the platform and the services time
//! on their own (`observe::Phase`): authentication, cache calls, database
//! statements (pooled and short reads; the pool's acquire counts as
//! `wait`), outbound calls, and for a write handed to a group commit the
//! wait for the batch before it and its own batch's write. `write` is the
//! time from the handler's answer to the end of its body. A request slower
//! than the threshold is logged at WARN with these, its route, status and
//! request id.
//!
//! What happens before the service is called is outside any request; the
//! runtime lag probe ([`super::lag::probe`]) shows it.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::observe::tally::{Phase, Polls, Timing, ms};

/// Times every request when `limit` is set, and logs those slower than it.
pub async fn slow_requests(
    State(limit): State<Option<Duration>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(limit) = limit else {
        return next.run(req).await;
    };
    let started = Instant::now();
    let about = About::of(&req);
    let timing = Timing::new(limit);
    let (resp, polls) = timing.run(next.run(req)).await;
    let answered = Instant::now();
    let status = resp.status().as_u16();
    let report = Report {
        limit,
        started,
        answered,
        about,
        status,
        polls,
        timing,
    };
    resp.map(|body| Body::new(Reported::new(body, report)))
}

/// The request, as the log line names it.
struct About {
    method: String,
    route: String,
    request_id: String,
}

impl About {
    fn of(req: &Request) -> Self {
        Self {
            method: req.method().as_str().to_owned(),
            route: req
                .extensions()
                .get::<MatchedPath>()
                .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned()),
            request_id: req
                .headers()
                .get(&super::layers::REQUEST_ID)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned(),
        }
    }
}

/// Everything the log line needs, once the body has gone out.
struct Report {
    limit: Duration,
    started: Instant,
    answered: Instant,
    about: About,
    status: u16,
    polls: Polls,
    timing: Timing,
}

impl Report {
    fn finish(&self) {
        let total = self.started.elapsed();
        if total < self.limit {
            return;
        }
        let p = |phase: Phase| self.timing.phase(phase);
        let handled = self.answered.duration_since(self.started);
        let wait = handled.saturating_sub(self.polls.run + self.polls.ready);
        tracing::warn!(
            method = %self.about.method,
            route = %self.about.route,
            status = self.status,
            request_id = %self.about.request_id,
            total_ms = ms(total),
            run_ms = ms(self.polls.run),
            longest_poll_ms = ms(self.polls.longest),
            polls = self.polls.count,
            ready_ms = ms(self.polls.ready),
            wait_ms = ms(wait),
            write_ms = ms(total.saturating_sub(handled)),
            auth_ms = ms(p(Phase::Auth).time),
            cache_ms = ms(p(Phase::Cache).time),
            cache_calls = p(Phase::Cache).count,
            db_ms = ms(p(Phase::Db).time),
            db_statements = p(Phase::Db).count,
            outbound_ms = ms(p(Phase::Outbound).time),
            queued_ms = ms(p(Phase::Queued).time),
            batch_ms = ms(p(Phase::Batch).time),
            "slow request"
        );
    }
}

/// The answer's body, reporting when it has gone out (or was dropped).
struct Reported {
    body: Body,
    report: Option<Report>,
}

impl Reported {
    fn new(body: Body, report: Report) -> Self {
        Self {
            body,
            report: Some(report),
        }
    }
}

impl Drop for Reported {
    fn drop(&mut self) {
        if let Some(r) = self.report.take() {
            r.finish();
        }
    }
}

impl http_body::Body for Reported {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(None) = polled
            && let Some(r) = self.report.take()
        {
            r.finish();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
