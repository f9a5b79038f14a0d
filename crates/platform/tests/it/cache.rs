use std::time::Duration;

use keel_platform::cache::Cache;
use keel_platform::config::Secret;

async fn redis() -> Cache {
    let prefix = format!("keel-test:{}:", uuid::Uuid::new_v4().simple());
    Cache::redis(
        &Secret::new(keel_testkit::redis_url()),
        &prefix,
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
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(c.get("k").await.unwrap(), None);
    c.set("d", b"v", Duration::from_secs(60)).await.unwrap();
    c.delete("d").await.unwrap();
    assert_eq!(c.get("d").await.unwrap(), None);
}

#[tokio::test]
async fn redis_rate_limits_are_shared_between_handles() {
    let a = redis().await;
    let window = Duration::from_secs(60);
    for _ in 0..2 {
        assert!(a.hit("ip", 3, window).await.unwrap().allowed);
    }
    // Same Redis, same prefix: a second node counts on.
    let b = a.clone();
    assert!(b.hit("ip", 3, window).await.unwrap().allowed);
    let over = b.hit("ip", 3, window).await.unwrap();
    assert!(!over.allowed);
    assert_eq!(over.count, 4);
}

#[tokio::test]
async fn a_rate_limit_window_resets() {
    for c in [Cache::local("t:"), redis().await] {
        let window = Duration::from_millis(300);
        let mut denied = false;
        for _ in 0..5 {
            denied |= !c.hit("w", 2, window).await.unwrap().allowed;
        }
        assert!(denied);
        tokio::time::sleep(Duration::from_millis(350)).await;
        assert!(c.hit("w", 2, window).await.unwrap().allowed);
    }
}
