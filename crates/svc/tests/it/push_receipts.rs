//! Receipts: asked for after the delay, 1000 ids at a time, again while
//! not ready, and one job per send and minute however many batches.

use std::time::Duration;

use keel_platform::jobs::entity as job;
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::json;

use crate::helpers::Svc;
use crate::push_kit::{device, token, until};

const WITHIN: Duration = Duration::from_secs(20);

#[tokio::test]
async fn device_not_registered_in_a_receipt_deactivates_the_device() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..3).map(device)).await;
    svc.expo.receipt_error(&token(0), "DeviceNotRegistered");
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    svc.wait_sent(&admin, &id, WITHIN).await;
    until(WITHIN, "receipts are in", || async {
        svc.send_view(&admin, &id).await.body["progress"]["receipts_ok"] == 2
    })
    .await;
    let view = svc.send_view(&admin, &id).await;
    assert_eq!(view.body["progress"]["receipts_error"], 1);
    assert_eq!(view.body["progress"], svc.recount(&id).await);
    assert_eq!(svc.status_of(&token(0)).await.body["active"], false);
    assert_eq!(svc.status_of(&token(1)).await.body["active"], true);
    let stats = svc.stats(&admin).await;
    assert_eq!(
        stats["deliveries"]["receipts"],
        json!({"ok": 2, "error": {"DeviceNotRegistered": 1}})
    );
}

#[tokio::test]
async fn receipts_not_ready_yet_are_asked_for_again() {
    let svc = Svc::with(&[("KEEL_EXPO_RECEIPT_DELAY_SECS", "1".into())]).await;
    let admin = svc.push_admin().await;
    svc.seed((0..2).map(device)).await;
    svc.expo.receipts_ready(false);
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    svc.wait_sent(&admin, &id, WITHIN).await;
    until(WITHIN, "a first receipts request", || async {
        !svc.expo.receipt_requests().is_empty()
    })
    .await;
    assert_eq!(
        svc.send_view(&admin, &id).await.body["progress"]["receipts_ok"],
        0
    );
    svc.expo.receipts_ready(true);
    until(WITHIN, "receipts after a second request", || async {
        svc.send_view(&admin, &id).await.body["progress"]["receipts_ok"] == 2
    })
    .await;
}

#[tokio::test]
async fn a_big_send_stays_within_600_a_second_6_in_flight_and_1000_receipt_ids() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..1500).map(device)).await;
    let started = std::time::Instant::now();
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    svc.wait_sent(&admin, &id, Duration::from_secs(60)).await;
    let took = started.elapsed();
    let stats = svc.expo.stats();
    assert_eq!((stats.notifications, stats.distinct_tokens), (1500, 1500));
    assert_eq!(stats.rate_limited, 0, "never above 600 in any second");
    assert!(stats.max_in_flight <= 6, "{stats:?}");
    assert!(
        took >= Duration::from_secs(1),
        "1500 at 600/s take over a second: {took:?}"
    );
    until(WITHIN, "every receipt", || async {
        svc.send_view(&admin, &id).await.body["progress"]["receipts_ok"] == 1500
    })
    .await;
    let asked = svc.expo.receipt_requests();
    assert!(asked.iter().all(|n| *n <= 1000), "{asked:?}");
    assert_eq!(asked.iter().sum::<usize>(), 1500);
}

#[tokio::test]
async fn a_send_queues_one_receipts_job_per_minute_not_one_per_batch() {
    let svc = Svc::with(&[
        ("KEEL_EXPO_RECEIPT_DELAY_SECS", "3600".into()),
        ("KEEL_EXPO_RATE_PER_SECOND", "0".into()),
    ])
    .await;
    let admin = svc.push_admin().await;
    svc.seed((0..1500).map(device)).await;
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    svc.wait_sent(&admin, &id, Duration::from_secs(60)).await;
    assert_eq!(svc.expo.stats().notifications, 1500);
    let jobs = job::Entity::find()
        .filter(job::Column::Kind.eq("svc.push.receipts"))
        .count(svc.app.platform().db.read())
        .await
        .unwrap();
    // 15 batches, sent within a second or two: one minute, or two when
    // they straddle one (15 jobs before).
    assert!((1..=2).contains(&jobs), "{jobs} receipts jobs");
}
