//! When sends go out: scheduled, in the past, at a local time; and
//! cancelling them.

use std::time::Duration;

use chrono::{NaiveTime, Utc};
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, QueryFilter, Set};
use keel_svc::domain::push::request::next_local;
use keel_svc::entity::push_message;
use reqwest::Method;
use serde_json::json;

use crate::helpers::Svc;
use crate::push_kit::{device, token, until};

const WITHIN: Duration = Duration::from_secs(20);

#[tokio::test]
async fn a_send_in_the_future_is_scheduled_and_goes_out_then() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..3).map(device)).await;
    let at = Utc::now() + chrono::Duration::seconds(2);
    let r = svc
        .send(
            &admin,
            json!({"title": "t", "body": "b", "send_at": at.to_rfc3339()}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.body["status"], "scheduled");
    let id = r.body["id"].as_str().unwrap().to_owned();
    svc.app.jobs_settled().await;
    assert!(svc.expo.delivered().is_empty(), "nothing before send_at");
    assert_eq!(svc.send_view(&admin, &id).await.body["status"], "scheduled");
    svc.wait_sent(&admin, &id, WITHIN).await;
    assert!(Utc::now() >= at);
    assert_eq!(svc.expo.delivered().len(), 3);
    svc.assert_progress_recounts(&admin, &id).await;
}

#[tokio::test]
async fn a_past_send_at_means_now() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..2).map(device)).await;
    let r = svc
        .send(
            &admin,
            json!({"title": "t", "body": "b", "send_at": "2020-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(r.status, 202);
    let id = r.body["id"].as_str().unwrap().to_owned();
    svc.wait_sent(&admin, &id, WITHIN).await;
    assert_eq!(svc.expo.delivered().len(), 2);
}

#[tokio::test]
async fn a_local_time_send_is_due_at_that_time_in_each_devices_zone() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    let zones = [
        Some("Europe/Berlin"),
        Some("America/Los_Angeles"),
        Some("Asia/Tokyo"),
        None,
    ];
    svc.seed(zones.iter().enumerate().map(|(i, z)| {
        let mut d = device(i);
        d.timezone = Set(z.map(str::to_owned));
        d
    }))
    .await;
    let before = Utc::now();
    let r = svc
        .send(
            &admin,
            json!({"title": "t", "body": "b", "local_time": "09:30"}),
        )
        .await;
    let after = Utc::now();
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(
        (r.body["status"].as_str(), r.body["recipients"].as_i64()),
        (Some("scheduled"), Some(4))
    );
    let id = r.body["id"].as_str().unwrap().to_owned();
    let messages = push_message::Entity::find()
        .filter(push_message::Column::SendId.eq(id.as_str()))
        .all(svc.app.platform().db.read())
        .await
        .unwrap();
    let at = NaiveTime::from_hms_opt(9, 30, 0).unwrap();
    for (i, zone) in zones.iter().enumerate() {
        let m = messages.iter().find(|m| m.push_token == token(i)).unwrap();
        let lo = next_local(before, at, *zone);
        let hi = next_local(after, at, *zone);
        assert!(m.due_at == lo || m.due_at == hi, "{zone:?}: {}", m.due_at);
        assert!(m.due_at > before && m.due_at <= before + chrono::Duration::hours(24));
        assert_eq!(m.status, push_message::MessageStatus::Pending);
    }
    let view = svc.send_view(&admin, &id).await;
    assert_eq!(view.body["local_time"], "09:30");
    assert_eq!(view.body["progress"]["pending"], 4);
    assert_eq!(view.body["progress"], svc.recount(&id).await);
    svc.app.jobs_settled().await;
    assert!(svc.expo.delivered().is_empty());
}

#[tokio::test]
async fn a_scheduled_send_can_be_cancelled_and_then_sends_nothing() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..3).map(device)).await;
    let at = Utc::now() + chrono::Duration::seconds(1);
    let id = svc
        .sent(
            &admin,
            json!({"title": "t", "body": "b", "send_at": at.to_rfc3339()}),
        )
        .await;
    let r = svc
        .admin_call(Method::DELETE, &format!("/send/{id}"), admin.auth(), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"id": id, "status": "cancelled", "cancelled": 3})
    );
    // The dispatch still scheduled comes due, runs, and sends nothing.
    svc.app.jobs_drained().await;
    assert!(svc.expo.delivered().is_empty());
    let view = svc.send_view(&admin, &id).await;
    assert_eq!(view.body["status"], "cancelled");
    assert_eq!(view.body["progress"]["cancelled"], 3);
    let r = svc
        .admin_call(Method::DELETE, &format!("/send/{id}"), admin.auth(), None)
        .await;
    assert_eq!((r.status, r.code()), (409, "svc_push_not_cancellable"));
}

#[tokio::test]
async fn cancelling_a_send_under_way_stops_the_batches_not_yet_gone_out() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..250).map(device)).await;
    // The first batch is accepted; the next one to arrive is held.
    svc.expo.hold_after(1);
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    until(WITHIN, "a first batch reaches Expo", || async {
        !svc.expo.delivered().is_empty()
    })
    .await;
    // Which batch went first (of 100, 100 and 50) is the workers' race, and
    // so is whether another had already taken its turn to go out: a batch
    // on its way when the cancel comes stores what Expo answered.
    let gone = svc.expo.delivered().len();
    let r = svc
        .admin_call(Method::DELETE, &format!("/send/{id}"), admin.auth(), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let cancelled = r.body["cancelled"].as_u64().unwrap();
    // The held request fails; its retries find nothing left to send.
    svc.expo.release();
    svc.app.jobs_drained().await;
    let sent = svc.expo.delivered().len();
    assert!(sent >= gone && sent < 250, "{sent} sent, {gone} before");
    let answered = u64::try_from(250 - sent).unwrap();
    assert!(cancelled >= answered, "{cancelled} cancelled, {sent} sent");
    let view = svc.send_view(&admin, &id).await;
    assert_eq!(view.body["status"], "cancelled");
    assert_eq!(view.body["progress"]["sent"], sent);
    assert_eq!(view.body["progress"]["cancelled"], answered);
    assert_eq!(view.body["progress"], svc.recount(&id).await);
}

#[tokio::test]
async fn a_batch_waiting_for_its_turn_under_the_rate_limit_is_stopped_by_a_cancel() {
    // 200 notifications a second: two batches (of 100, 100 and 50) fill
    // the window, and while Expo holds them the third has read its
    // messages and waits.
    let svc = Svc::with(&[("KEEL_EXPO_RATE_PER_SECOND", "200".into())]).await;
    let admin = svc.push_admin().await;
    svc.seed((0..250).map(device)).await;
    svc.expo.hold_after(0);
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    until(WITHIN, "two batches are held at Expo", || async {
        svc.expo.stats().max_in_flight == 2
    })
    .await;
    until(WITHIN, "the three batches are taken by workers", || async {
        svc.batch_jobs_claimed().await == 3
    })
    .await;
    let r = svc
        .admin_call(Method::DELETE, &format!("/send/{id}"), admin.auth(), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["cancelled"], 250, "{}", r.text);
    // The held batches are refused and find nothing left; the waiting one
    // gets its turn a second later and looks again before going out.
    svc.expo.release();
    svc.app.jobs_drained().await;
    assert!(svc.expo.delivered().is_empty());
    let view = svc.send_view(&admin, &id).await;
    assert_eq!(view.body["progress"]["cancelled"], 250);
    assert_eq!(view.body["progress"], svc.recount(&id).await);
}

#[tokio::test]
async fn a_finished_or_unknown_send_cannot_be_cancelled() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..2).map(device)).await;
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    svc.wait_sent(&admin, &id, WITHIN).await;
    let r = svc
        .admin_call(Method::DELETE, &format!("/send/{id}"), admin.auth(), None)
        .await;
    assert_eq!((r.status, r.code()), (409, "svc_push_not_cancellable"));
    for path in ["/send/0190a6c4-0000-7000-8000-000000000000", "/send/nope"] {
        let r = svc
            .admin_call(Method::DELETE, path, admin.auth(), None)
            .await;
        assert_eq!(
            (r.status, r.code()),
            (404, "svc_push_send_not_found"),
            "{path}"
        );
        let r = svc.admin_call(Method::GET, path, admin.auth(), None).await;
        assert_eq!(
            (r.status, r.code()),
            (404, "svc_push_send_not_found"),
            "{path}"
        );
    }
}
