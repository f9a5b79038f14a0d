//! Where a slow request's time went (`KEEL_SLOW_REQUEST_MS`).
//!
//! Off by default, and then no request is timed. When set, each request is timed from the
//! moment its service is called to the end of its answer's body, and its
//! time is split three ways:
//!
//! - `run`: its future running on a runtime thread (its own CPU, and any
//!   blocking call it makes, such as an inline SQLite read);
//! - `ready`: woken and waiting for a thread (other requests and background
//!   tasks ahead of it, or the OS running something else on the core);
//! - `wait`: the rest, waiting on something outside (the database, Redis,
//!   a provider, a timer).
//!
//! and, overlapping those, the phases the platform and the services time on
//! their own ([`Phase`]): authentication, cache calls, database statements
//! (pooled and short reads; the pool's acquire counts as `wait`), outbound
//! calls, and for a write handed to a group commit ([`crate::batch`]) the
//! wait for the batch before it and its own batch's write. `write` is the time from the handler's answer to the end of its
//! body. A request slower than the threshold is logged at WARN with these,
//! its route, status and request id.
//!
//! What happens before the service is called is outside any request; the
//! runtime lag probe ([`super::lag::probe`]) shows it.
//!
//! A group commit's batch is timed the same way when a timed request is in
//! it ([`timed_batch`]), and logged as `slow batch` past the threshold.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

/// What the platform and the services time inside a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Auth,
    Cache,
    Db,
    Outbound,
    /// Handed to a group commit, waiting for the batch before it.
    Queued,
    /// Its own batch being written (every statement of it, and the commit).
    Batch,
}

const PHASES: usize = 6;

#[derive(Default, Clone, Copy)]
struct Tally {
    time: Duration,
    count: u32,
}

/// What a timed request (or batch) has tallied, and its threshold.
struct Timed {
    limit: Duration,
    tallies: Mutex<[Tally; PHASES]>,
}

type Record = Arc<Timed>;

fn record_for(limit: Duration) -> Record {
    Arc::new(Timed {
        limit,
        tallies: Mutex::new([Tally::default(); PHASES]),
    })
}

tokio::task_local! {
    static CURRENT: Record;
}

/// Adds `took` to `phase` of the request this task serves, when it is
/// timed.
pub fn record(phase: Phase, took: Duration) {
    let _ = CURRENT.try_with(|r| {
        let mut r = r.tallies.lock().unwrap_or_else(PoisonError::into_inner);
        let t = &mut r[phase as usize];
        t.time += took;
        t.count += 1;
    });
}

/// Whether the request this task serves is timed.
pub fn timing() -> bool {
    CURRENT.try_with(|_| ()).is_ok()
}

/// The slow-request threshold, when the request this task serves is timed.
pub fn limit() -> Option<Duration> {
    CURRENT.try_with(|r| r.limit).ok()
}

/// Runs `fut`, its time counted to `phase` when the request is timed.
pub async fn timed<F: Future>(phase: Phase, fut: F) -> F::Output {
    if !timing() {
        return fut.await;
    }
    let started = Instant::now();
    let out = fut.await;
    record(phase, started.elapsed());
    out
}

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
    let record = record_for(limit);
    let (resp, polls) = Watched::new(CURRENT.scope(record.clone(), next.run(req))).await;
    let answered = Instant::now();
    let status = resp.status().as_u16();
    let report = Report {
        limit,
        started,
        answered,
        about,
        status,
        polls,
        record,
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

/// What a request's future did on the runtime.
#[derive(Default, Clone, Copy)]
struct Polls {
    run: Duration,
    longest: Duration,
    ready: Duration,
    count: u32,
}

/// Nanoseconds since the first use, plus one (0 means "not woken").
fn now_mark() -> u64 {
    static BASE: OnceLock<Instant> = OnceLock::new();
    let base = *BASE.get_or_init(Instant::now);
    u64::try_from(base.elapsed().as_nanos())
        .unwrap_or(u64::MAX - 1)
        .saturating_add(1)
}

/// A waker that notes when it was first woken, then wakes the task.
struct Mark {
    woken: AtomicU64,
    waker: Waker,
}

impl Wake for Mark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let _ = (self.woken).compare_exchange(0, now_mark(), Ordering::AcqRel, Ordering::Acquire);
        self.waker.wake_by_ref();
    }
}

/// A future with its polls timed, and the time between a wake and the
/// poll it led to.
struct Watched<F> {
    inner: Pin<Box<F>>,
    polls: Polls,
    mark: Option<Arc<Mark>>,
}

impl<F: Future> Watched<F> {
    fn new(inner: F) -> Self {
        Self {
            inner: Box::pin(inner),
            polls: Polls::default(),
            mark: None,
        }
    }
}

impl<F: Future> Future for Watched<F> {
    type Output = (F::Output, Polls);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let now = now_mark();
        let started = Instant::now();
        if let Some(mark) = this.mark.take() {
            let woken = mark.woken.load(Ordering::Acquire);
            if woken != 0 {
                this.polls.ready += Duration::from_nanos(now.saturating_sub(woken));
            }
        }
        let mark = Arc::new(Mark {
            woken: AtomicU64::new(0),
            waker: cx.waker().clone(),
        });
        let waker = Waker::from(mark.clone());
        let polled = this.inner.as_mut().poll(&mut Context::from_waker(&waker));
        let took = started.elapsed();
        this.polls.run += took;
        this.polls.longest = this.polls.longest.max(took);
        this.polls.count += 1;
        match polled {
            Poll::Ready(out) => Poll::Ready((out, this.polls)),
            Poll::Pending => {
                this.mark = Some(mark);
                Poll::Pending
            }
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
    record: Record,
}

impl Report {
    fn finish(&self) {
        let total = self.started.elapsed();
        if total < self.limit {
            return;
        }
        let phases = *self
            .record
            .tallies
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let p = |phase: Phase| phases[phase as usize];
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

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0 * 100.0).round() / 100.0
}

/// Runs `fut` as a request timed with `limit`; what each phase tallied.
#[cfg(test)]
pub(crate) async fn tallied<F: Future>(limit: Duration, fut: F) -> (F::Output, [Duration; PHASES]) {
    let record = record_for(limit);
    let out = CURRENT.scope(record.clone(), fut).await;
    let tallies = *record
        .tallies
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    (out, tallies.map(|t| t.time))
}

/// Runs a group commit's write of `items` items for `writer`; when `limit`
/// is set (a timed request is in the batch) it is timed as a request is,
/// its statements included, and logged as `slow batch` when it took
/// `limit` or more.
pub async fn timed_batch<F: Future>(
    limit: Option<Duration>,
    writer: &'static str,
    items: usize,
    fut: F,
) -> F::Output {
    let Some(limit) = limit else {
        return fut.await;
    };
    let started = Instant::now();
    let record = record_for(limit);
    let (out, polls) = Watched::new(CURRENT.scope(record.clone(), fut)).await;
    let total = started.elapsed();
    if total >= limit {
        let db = record
            .tallies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)[Phase::Db as usize];
        tracing::warn!(
            writer,
            items,
            total_ms = ms(total),
            run_ms = ms(polls.run),
            longest_poll_ms = ms(polls.longest),
            polls = polls.count,
            ready_ms = ms(polls.ready),
            wait_ms = ms(total.saturating_sub(polls.run + polls.ready)),
            db_ms = ms(db.time),
            db_statements = db.count,
            "slow batch"
        );
    }
    out
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
