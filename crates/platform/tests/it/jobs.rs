use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use keel_platform::jobs::{self, Job, JobContext, JobError, JobRegistry, Worker};
use keel_platform::sea_orm::{EntityTrait, PaginatorTrait};
use keel_testkit::{TestPlatform, eventually};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

#[derive(Serialize, Deserialize)]
struct Note {
    n: u32,
}

impl Job for Note {
    const KIND: &'static str = "test.note";
    const MAX_ATTEMPTS: u32 = 3;
}

type Runs = Arc<Mutex<HashMap<u32, u32>>>;

/// A registry whose handler counts runs per `n` and fails while `fail(n, attempt)`.
fn registry(runs: &Runs, fail: fn(u32, u32) -> Option<JobError>) -> JobRegistry {
    let mut r = JobRegistry::default();
    let runs = runs.clone();
    r.register(move |job: Note, ctx: JobContext| {
        let runs = runs.clone();
        async move {
            *runs.lock().unwrap().entry(job.n).or_default() += 1;
            match fail(job.n, ctx.attempt) {
                Some(e) => Err(e),
                None => Ok(()),
            }
        }
    });
    r
}

fn start(tp: &TestPlatform, registry: JobRegistry) -> CancellationToken {
    let stop = CancellationToken::new();
    let worker = Worker::new(tp.platform.db.clone(), registry, tp.config().jobs.clone());
    tokio::spawn(worker.run(stop.clone(), Duration::from_secs(2)));
    stop
}

async fn remaining(tp: &TestPlatform) -> u64 {
    jobs::entity::Entity::find()
        .count(tp.platform.db.write())
        .await
        .unwrap()
}

fn count(runs: &Runs, n: u32) -> u32 {
    runs.lock().unwrap().get(&n).copied().unwrap_or(0)
}

#[tokio::test]
async fn an_enqueued_job_runs_once_and_is_removed() {
    let tp = TestPlatform::start(&[]).await;
    let runs = Runs::default();
    jobs::enqueue(tp.platform.db.write(), &Note { n: 1 })
        .await
        .unwrap();
    let _stop = start(&tp, registry(&runs, |_, _| None));
    eventually(Duration::from_secs(5), || {
        (count(&runs, 1) == 1).then_some(())
    })
    .await
    .expect("ran");
    keel_testkit::jobs_drained(&tp.platform.db).await;
    assert_eq!(count(&runs, 1), 1);
    assert_eq!(remaining(&tp).await, 0);
}

#[tokio::test]
async fn a_job_enqueued_in_a_rolled_back_transaction_never_exists() {
    let tp = TestPlatform::start(&[]).await;
    let txn = tp.platform.db.begin_write().await.unwrap();
    jobs::enqueue(&txn, &Note { n: 1 }).await.unwrap();
    txn.rollback().await.unwrap();
    assert_eq!(remaining(&tp).await, 0);
}

#[tokio::test]
async fn a_job_due_later_waits_for_its_time() {
    let tp = TestPlatform::start(&[]).await;
    let runs = Runs::default();
    let at = Utc::now() + chrono::Duration::milliseconds(700);
    jobs::enqueue_at(tp.platform.db.write(), &Note { n: 1 }, at)
        .await
        .unwrap();
    let _stop = start(&tp, registry(&runs, |_, _| None));
    // A fixed wait: what is checked is that nothing happens for a while.
    // Read before the clock: a run seen while it is still early is early.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ran = count(&runs, 1);
    assert!(ran == 0 || Utc::now() >= at, "ran before its time");
    eventually(Duration::from_secs(5), || {
        (count(&runs, 1) == 1).then_some(())
    })
    .await
    .expect("ran");
}

#[tokio::test]
async fn a_failing_job_is_retried_until_it_succeeds() {
    let tp = TestPlatform::start(&[]).await;
    let runs = Runs::default();
    jobs::enqueue(tp.platform.db.write(), &Note { n: 7 })
        .await
        .unwrap();
    let _stop = start(
        &tp,
        registry(&runs, |_, attempt| {
            (attempt < 3).then(|| JobError::retry("not yet"))
        }),
    );
    eventually(Duration::from_secs(5), || {
        (count(&runs, 7) == 3).then_some(())
    })
    .await
    .expect("three runs");
    let left = keel_testkit::eventually_async(Duration::from_secs(3), || async {
        (remaining(&tp).await == 0).then_some(())
    })
    .await;
    assert!(left.is_some(), "done after the third attempt");
}

#[tokio::test]
async fn a_job_that_keeps_failing_is_marked_failed_after_its_attempts() {
    let tp = TestPlatform::start(&[]).await;
    let runs = Runs::default();
    jobs::enqueue(tp.platform.db.write(), &Note { n: 2 })
        .await
        .unwrap();
    let _stop = start(&tp, registry(&runs, |_, _| Some(JobError::retry("never"))));
    eventually(Duration::from_secs(5), || {
        (count(&runs, 2) == 3).then_some(())
    })
    .await
    .expect("three runs");
    let failed = keel_testkit::eventually_async(Duration::from_secs(3), || async {
        let all = jobs::entity::Entity::find()
            .all(tp.platform.db.write())
            .await
            .unwrap();
        all.first().filter(|j| j.status == "failed").cloned()
    })
    .await
    .expect("marked failed");
    assert_eq!(failed.attempts, 3);
    assert_eq!(failed.last_error.as_deref(), Some("never"));
    keel_testkit::jobs_drained(&tp.platform.db).await;
    assert_eq!(count(&runs, 2), 3, "no fourth attempt");
}

#[tokio::test]
async fn a_permanent_failure_is_not_retried() {
    let tp = TestPlatform::start(&[]).await;
    let runs = Runs::default();
    jobs::enqueue(tp.platform.db.write(), &Note { n: 3 })
        .await
        .unwrap();
    let _stop = start(
        &tp,
        registry(&runs, |_, _| Some(JobError::fail("bad input"))),
    );
    eventually(Duration::from_secs(5), || {
        (count(&runs, 3) == 1).then_some(())
    })
    .await
    .expect("ran");
    keel_testkit::jobs_drained(&tp.platform.db).await;
    assert_eq!(count(&runs, 3), 1);
}

#[tokio::test]
async fn a_panicking_handler_is_retried_and_does_not_stop_the_worker() {
    let tp = TestPlatform::start(&[]).await;
    let runs = Runs::default();
    jobs::enqueue(tp.platform.db.write(), &Note { n: 4 })
        .await
        .unwrap();
    jobs::enqueue(tp.platform.db.write(), &Note { n: 5 })
        .await
        .unwrap();
    let mut r = JobRegistry::default();
    let counted = runs.clone();
    r.register(move |job: Note, ctx: JobContext| {
        let runs = counted.clone();
        async move {
            *runs.lock().unwrap().entry(job.n).or_default() += 1;
            assert!(!(job.n == 4 && ctx.attempt == 1), "first run of 4 panics");
            Ok(())
        }
    });
    let _stop = start(&tp, r);
    eventually(Duration::from_secs(5), || {
        (count(&runs, 4) == 2 && count(&runs, 5) == 1).then_some(())
    })
    .await
    .expect("4 retried, 5 ran");
}

#[tokio::test]
async fn a_job_survives_a_restart_and_runs_once_on_the_next_worker() {
    let tp = TestPlatform::start(&[]).await;
    jobs::enqueue(tp.platform.db.write(), &Note { n: 9 })
        .await
        .unwrap();
    // The first "process" goes away without running it.
    let first = tp.another().await;
    first.db.clone().close().await;
    let runs = Runs::default();
    let second = tp.another().await;
    let stop = CancellationToken::new();
    let w = Worker::new(
        second.db.clone(),
        registry(&runs, |_, _| None),
        tp.config().jobs.clone(),
    );
    tokio::spawn(w.run(stop.clone(), Duration::from_secs(1)));
    eventually(Duration::from_secs(5), || {
        (count(&runs, 9) == 1).then_some(())
    })
    .await
    .expect("ran");
    keel_testkit::jobs_drained(&tp.platform.db).await;
    assert_eq!(count(&runs, 9), 1);
}

#[tokio::test]
async fn a_job_whose_worker_died_runs_again_when_its_lease_runs_out() {
    let tp = TestPlatform::start(&[("KEEL_JOB_LEASE_SECS", "1")]).await;
    jobs::enqueue(tp.platform.db.write(), &Note { n: 6 })
        .await
        .unwrap();
    let hung = Runs::default();
    let mut r = JobRegistry::default();
    let counted = hung.clone();
    r.register(move |_job: Note, _ctx: JobContext| {
        let runs = counted.clone();
        async move {
            *runs.lock().unwrap().entry(0).or_default() += 1;
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    let dying = start(&tp, r);
    eventually(Duration::from_secs(5), || {
        (count(&hung, 0) == 1).then_some(())
    })
    .await
    .expect("claimed");
    // Kill the first worker without letting it release anything.
    dying.cancel();
    let runs = Runs::default();
    let _stop = start(&tp, registry(&runs, |_, _| None));
    eventually(Duration::from_secs(6), || {
        (count(&runs, 6) == 1).then_some(())
    })
    .await
    .expect("re-run after the lease");
}

#[tokio::test]
async fn a_unique_job_is_enqueued_once() {
    let tp = TestPlatform::start(&[]).await;
    let now = Utc::now();
    assert!(
        jobs::enqueue_unique(tp.platform.db.write(), &Note { n: 1 }, "k", now)
            .await
            .unwrap()
    );
    assert!(
        !jobs::enqueue_unique(tp.platform.db.write(), &Note { n: 1 }, "k", now)
            .await
            .unwrap()
    );
    assert_eq!(remaining(&tp).await, 1);
}

#[tokio::test]
async fn two_workers_run_each_of_many_jobs_exactly_once() {
    let tp = TestPlatform::start(&[("KEEL_JOB_CONCURRENCY", "4")]).await;
    for n in 0..60 {
        jobs::enqueue(tp.platform.db.write(), &Note { n })
            .await
            .unwrap();
    }
    let runs = Runs::default();
    let _a = start(&tp, registry(&runs, |_, _| None));
    let other = tp.another().await;
    let stop = CancellationToken::new();
    let w = Worker::new(
        other.db.clone(),
        registry(&runs, |_, _| None),
        tp.config().jobs.clone(),
    );
    tokio::spawn(w.run(stop.clone(), Duration::from_secs(1)));
    eventually(Duration::from_secs(15), || {
        (runs.lock().unwrap().len() == 60).then_some(())
    })
    .await
    .expect("all ran");
    keel_testkit::jobs_drained(&tp.platform.db).await;
    assert!(
        runs.lock().unwrap().values().all(|&c| c == 1),
        "{:?}",
        runs.lock().unwrap()
    );
}

/// The connections of the pool `url` names (by its application name), as
/// seen from a connection of another name (so looking touches no pooled
/// connection).
async fn pooled_connections(url: &str) -> usize {
    use keel_platform::sea_orm::{ConnectOptions, ConnectionTrait, Database, Statement};
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.max_connections(1)
        .map_sqlx_postgres_opts(|o| o.application_name("pool watcher"));
    let watcher = Database::connect(opts).await.unwrap();
    let app = url
        .split("application_name=")
        .nth(1)
        .and_then(|rest| rest.split('&').next())
        .unwrap()
        .to_owned();
    let rows = watcher
        .query_all_raw(Statement::from_string(
            watcher.get_database_backend(),
            format!("SELECT pid FROM pg_stat_activity WHERE application_name = '{app}'"),
        ))
        .await
        .unwrap();
    watcher.close().await.unwrap();
    rows.len()
}

#[tokio::test]
async fn a_polling_worker_lets_the_pools_connections_close_after_a_burst() {
    use keel_platform::sea_orm::ConnectionTrait;
    let tp = TestPlatform::start(&[
        ("KEEL_DB_IDLE_SECS", "1"),
        ("KEEL_PG_SHORT_READS", "false"),
        ("KEEL_DB_MAX_CONNECTIONS", "8"),
    ])
    .await;
    if !tp.platform.db.is_postgres() {
        return;
    }
    let runs = Runs::default();
    let stop = start(&tp, registry(&runs, |_, _| None));
    // A burst opens six pooled connections; the worker keeps polling
    // every 50 ms after it.
    let db = &tp.platform.db;
    let burst = (0..6).map(|_| db.read().execute_unprepared("SELECT pg_sleep(0.3)"));
    for done in futures::future::join_all(burst).await {
        done.unwrap();
    }
    assert!(pooled_connections(&tp.db.url).await >= 6);
    // Idle a second, they close: only the worker's own connection stays.
    let settled = keel_testkit::eventually_async(Duration::from_secs(20), || async {
        let n = pooled_connections(&tp.db.url).await;
        (n <= 1).then_some(n)
    })
    .await;
    assert!(
        settled.is_some(),
        "pooled connections stayed open: {}",
        pooled_connections(&tp.db.url).await
    );
    stop.cancel();
}
