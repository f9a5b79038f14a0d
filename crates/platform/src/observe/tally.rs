//! Where a timed request's time went (`KEEL_SLOW_REQUEST_MS`): the phases
//! the platform and the services time inside it ([`Phase`]), tallied in a
//! task-local record, and its future's polls (running on a thread, woken
//! and waiting for one). Nothing is timed unless a request is: off by
//! default, and then [`timed`] is one task-local look-up.
//!
//! `http::slow` times each request with a [`Timing`] and logs the slow
//! ones; a group commit's batch is timed the same way when a timed request
//! is in it ([`timed_batch`]), and logged as `slow batch` past the
//! threshold.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

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

pub const PHASES: usize = 6;

/// One phase's time and calls.
#[derive(Default, Clone, Copy, Debug)]
pub struct Tally {
    pub time: Duration,
    pub count: u32,
}

/// What a timed request (or batch) has tallied, and its threshold.
struct Timed {
    limit: Duration,
    tallies: Mutex<[Tally; PHASES]>,
}

/// A request's (or batch's) timing: what its phases tallied, read when it
/// has ended (its answer's body included).
#[derive(Clone)]
pub struct Timing(Arc<Timed>);

tokio::task_local! {
    static CURRENT: Timing;
}

impl Timing {
    pub fn new(limit: Duration) -> Self {
        Self(Arc::new(Timed {
            limit,
            tallies: Mutex::new([Tally::default(); PHASES]),
        }))
    }

    /// Runs `fut` as this timing's work: what it tallies comes here, and
    /// its polls are watched.
    pub async fn run<F: Future>(&self, fut: F) -> (F::Output, Polls) {
        Watched::new(CURRENT.scope(self.clone(), fut)).await
    }

    /// What `phase` tallied so far.
    pub fn phase(&self, phase: Phase) -> Tally {
        self.0
            .tallies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)[phase as usize]
    }
}

/// Adds `took` to `phase` of the request this task serves, when it is
/// timed.
pub fn record(phase: Phase, took: Duration) {
    let _ = CURRENT.try_with(|r| {
        let mut r = r.0.tallies.lock().unwrap_or_else(PoisonError::into_inner);
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
    CURRENT.try_with(|r| r.0.limit).ok()
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

/// What a request's future did on the runtime.
#[derive(Default, Clone, Copy, Debug)]
pub struct Polls {
    /// Running on a thread (its own CPU, and any blocking call it makes).
    pub run: Duration,
    pub longest: Duration,
    /// Woken and waiting for a thread.
    pub ready: Duration,
    pub count: u32,
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

/// Milliseconds with two decimals, as the log lines give them.
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0 * 100.0).round() / 100.0
}

/// Runs `fut` as a request timed with `limit`; what each phase tallied.
#[cfg(test)]
pub(crate) async fn tallied<F: Future>(limit: Duration, fut: F) -> (F::Output, [Duration; PHASES]) {
    let timing = Timing::new(limit);
    let (out, _) = timing.run(fut).await;
    let tallies = *timing
        .0
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
    let timing = Timing::new(limit);
    let (out, polls) = timing.run(fut).await;
    let total = started.elapsed();
    if total >= limit {
        let db = timing.phase(Phase::Db);
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
