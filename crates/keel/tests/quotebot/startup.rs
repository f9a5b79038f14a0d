//! The start behind a health listener that is already up: liveness
//! answers while the start waits for a migration lock or for Redis, and
//! readiness says what it waits for.

use std::net::SocketAddr;
use std::time::Duration;

use keel_testkit::get_json as get;
use keel_testkit::process::KeelProcess;
use keel_testkit::{TcpProxy, eventually, eventually_async};
use serde_json::Value;

use crate::harness::Quotebot;

/// The readiness URL the manager prints first.
async fn health_url(p: &KeelProcess) -> String {
    eventually(Duration::from_secs(10), || {
        p.stdout()
            .lines()
            .find_map(|l| l.strip_prefix("health"))
            .map(|u| u.trim().to_owned())
    })
    .await
    .unwrap_or_else(|| panic!("no health line; stderr:\n{}", p.stderr()))
}

/// Waits until readiness answers `status`; its body.
async fn until_status(url: &str, status: u16, within: Duration) -> Option<Value> {
    eventually_async(within, || async {
        get(url).await.filter(|(s, _)| *s == status).map(|(_, b)| b)
    })
    .await
}

#[tokio::test]
async fn liveness_answers_while_the_migration_waits_for_its_lock() {
    let q = Quotebot::new().await;
    let txn = q.db.hold_migration_lock().await;
    let p = q.spawn(&[]);
    let health = health_url(&p).await;
    let live = health.replace("/api/health", "/api/health/live");
    assert_eq!(get(&live).await.map(|r| r.0), Some(200));
    let waiting = until_status(&health, 503, Duration::from_secs(5))
        .await
        .expect("not ready while migrating");
    assert_eq!(waiting["status"], "starting");
    assert_eq!(waiting["checks"]["startup"], "migrating the database");

    txn.rollback().await.unwrap();
    let ready = until_status(&health, 200, Duration::from_secs(30)).await;
    assert!(ready.is_some(), "ready once migrated:\n{}", p.stderr());
    let sessions = eventually(Duration::from_secs(30), || {
        (!q.discord.sessions().is_empty()).then_some(())
    })
    .await;
    assert!(sessions.is_some(), "the shard connects:\n{}", p.stderr());
}

#[tokio::test]
async fn an_unreachable_redis_at_start_is_waited_for_not_a_crash() {
    let mut q = Quotebot::new().await;
    assert_eq!(q.run(&["migrate"]).await.0, 0);
    let redis_addr: SocketAddr = keel_testkit::redis_url()
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let redis = TcpProxy::start(redis_addr).await;
    redis.go_down();
    q.set("REDIS_URL", format!("redis://{}", redis.addr));
    let mut p = q.spawn(&[]);
    let health = health_url(&p).await;
    let live = health.replace("/api/health", "/api/health/live");
    let waiting = until_status(&health, 503, Duration::from_secs(10))
        .await
        .expect("not ready without Redis");
    let waiting = eventually_async(Duration::from_secs(10), || async {
        let (_, b) = get(&health).await?;
        b["checks"]["startup"]
            .as_str()
            .is_some_and(|s| s.starts_with("waiting for Redis"))
            .then_some(b)
    })
    .await
    .unwrap_or_else(|| panic!("readiness names Redis: {waiting}"));
    assert_eq!(waiting["status"], "starting");
    assert_eq!(get(&live).await.map(|r| r.0), Some(200));
    assert!(p.try_status().is_none(), "still running:\n{}", p.stderr());

    redis.come_back();
    let ready = until_status(&health, 200, Duration::from_secs(20)).await;
    assert!(ready.is_some(), "ready once Redis answers:\n{}", p.stderr());
    p.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(p.wait(Duration::from_secs(30)).await.success());
}
