use std::time::Duration;

use std::time::Instant;

use keel_platform::cache::{ArrivalWindow, Cache};
use keel_platform::config::Secret;

async fn redis() -> Cache {
    redis_with(&format!("keel-test:{}:", uuid::Uuid::new_v4().simple())).await
}

/// A second handle on one Redis and prefix is what a second node has.
async fn redis_with(prefix: &str) -> Cache {
    Cache::redis(
        &Secret::new(keel_testkit::redis_url()),
        prefix,
        Duration::from_secs(5),
    )
    .await
    .expect("the test Redis answers")
}

#[tokio::test]
async fn redis_values_are_stored_read_expired_and_deleted() {
    let c = redis().await;
    c.set("k", b"v", Duration::from_millis(300)).await.unwrap();
    assert_eq!(c.get("k").await.unwrap(), Some(b"v".to_vec()));
    let expired = keel_testkit::eventually_async(Duration::from_secs(3), || async {
        c.get("k").await.unwrap().is_none().then_some(())
    })
    .await;
    assert!(expired.is_some(), "the value expires");
    c.set("d", b"v", Duration::from_secs(60)).await.unwrap();
    c.delete("d").await.unwrap();
    assert_eq!(c.get("d").await.unwrap(), None);
}

#[tokio::test]
async fn a_redis_claim_is_taken_once_across_handles_until_it_expires() {
    let a = redis().await;
    let b = a.clone();
    assert!(a.claim("c", Duration::from_millis(300)).await.unwrap());
    assert!(!b.claim("c", Duration::from_millis(300)).await.unwrap());
    let taken = keel_testkit::eventually_async(Duration::from_secs(3), || async {
        b.claim("c", Duration::from_millis(300))
            .await
            .unwrap()
            .then_some(())
    })
    .await;
    assert!(taken.is_some(), "the claim is free again once it expired");
}

#[tokio::test]
async fn a_redis_counter_is_shared_across_handles() {
    let a = redis().await;
    let b = a.clone();
    assert_eq!(a.counter("e").await.unwrap(), 0);
    assert_eq!(a.incr("e", Duration::from_secs(60)).await.unwrap(), 1);
    assert_eq!(b.incr("e", Duration::from_secs(60)).await.unwrap(), 2);
    assert_eq!(a.counter("e").await.unwrap(), 2);
}

#[tokio::test]
async fn redis_rate_limits_are_shared_between_handles() {
    let a = redis().await;
    let window = Duration::from_secs(60);
    for _ in 0..2 {
        assert!(a.hit("t", "ip", 3, window).await.allowed);
    }
    // Same Redis, same prefix: a second node counts on.
    let b = a.clone();
    assert!(b.hit("t", "ip", 3, window).await.allowed);
    let over = b.hit("t", "ip", 3, window).await;
    assert!(!over.allowed);
    assert_eq!(over.count, 4);
}

#[tokio::test]
async fn a_rate_limit_window_resets() {
    for c in [Cache::local("t:"), redis().await] {
        let window = Duration::from_millis(300);
        let mut denied = false;
        for _ in 0..5 {
            denied |= !c.hit("t", "w", 2, window).await.allowed;
        }
        assert!(denied);
        // Two windows on, the burst's slot no longer weighs. A fixed wait:
        // the window is time itself, and asking again meanwhile would count.
        tokio::time::sleep(Duration::from_millis(650)).await;
        assert!(c.hit("t", "w", 2, window).await.allowed);
    }
}

/// Requests through one or two windows: each admitted for `n`, answered
/// after `busy`; (admitted, answered) instants.
async fn traffic(
    windows: &[ArrivalWindow],
    requests: usize,
    n: usize,
    busy: Duration,
) -> Vec<(Instant, Instant)> {
    let runs = (0..requests).map(|i| {
        let w = &windows[i % windows.len()];
        async move {
            let admitted = w.admit(n).await.unwrap();
            let at = Instant::now();
            tokio::time::sleep(busy).await;
            drop(admitted);
            (at, Instant::now())
        }
    });
    futures::future::join_all(runs).await
}

/// The most units ever inside one window: a request counts from its
/// admission until `span` after its answer.
fn peak(log: &[(Instant, Instant)], n: usize, span: Duration) -> usize {
    log.iter()
        .map(|(t, _)| {
            log.iter()
                .filter(|(a, done)| a <= t && *t < *done + span)
                .count()
                * n
        })
        .max()
        .unwrap_or(0)
}

#[tokio::test]
async fn an_arrival_window_in_redis_holds_two_nodes_to_one_limit() {
    let prefix = format!("keel-test:{}:", uuid::Uuid::new_v4().simple());
    let (a, b) = (redis_with(&prefix).await, redis_with(&prefix).await);
    let span = Duration::from_millis(400);
    let windows = [
        ArrivalWindow::shared(&a, "expo", 300, span),
        ArrivalWindow::shared(&b, "expo", 300, span),
    ];
    assert!(windows.iter().all(ArrivalWindow::is_shared));
    let started = Instant::now();
    let log = traffic(&windows, 12, 100, Duration::from_millis(20)).await;
    // Redis judges on its own clock and settles asynchronously: allow the
    // few milliseconds the two clocks and the settle may differ.
    assert!(
        peak(&log, 100, span - Duration::from_millis(60)) <= 300,
        "{log:?}"
    );
    // 12 x 100 at 300 per 400 ms: at least three full spans of waiting.
    assert!(started.elapsed() >= span * 3);
}

#[tokio::test]
async fn separate_local_windows_do_not_share_a_limit() {
    let span = Duration::from_millis(400);
    let windows = [
        ArrivalWindow::shared(&Cache::local("t:"), "expo", 300, span),
        ArrivalWindow::shared(&Cache::local("t:"), "expo", 300, span),
    ];
    assert!(!windows[0].is_shared());
    let log = traffic(&windows, 6, 100, Duration::from_millis(20)).await;
    assert_eq!(
        peak(&log, 100, span),
        600,
        "each process allows its own 300"
    );
}
