//! Sending: targets, batches, retries, tickets, filters and stats.

use std::collections::HashSet;
use std::time::Duration;

use chrono::Utc;
use keel_platform::sea_orm::Set;
use reqwest::Method;
use serde_json::json;

use crate::helpers::Svc;
use crate::push_kit::{device, token, until};

const WITHIN: Duration = Duration::from_secs(20);

#[tokio::test]
async fn a_send_to_all_reaches_every_active_device_once_in_batches_of_at_most_100() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..250).map(|i| {
        let mut d = device(i);
        if i == 7 {
            d.active = Set(false);
        }
        d
    }))
    .await;
    let r = svc
        .send(
            &admin,
            json!({"title": "Hello", "body": "World", "data": {"screen": "news", "id": 3}}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.body["recipients"], 249);
    assert!(["queued", "sending", "sent"].contains(&r.body["status"].as_str().unwrap()));
    let id = r.body["id"].as_str().unwrap().to_owned();
    let view = svc.wait_sent(&admin, &id, WITHIN).await;
    assert_eq!(view["progress"]["sent"], 249);
    assert_eq!(view["progress"]["pending"], 0);
    assert_eq!(view["title"], "Hello");
    let delivered = svc.expo.delivered();
    assert_eq!(delivered.len(), 249);
    let tokens: HashSet<_> = delivered.iter().map(|d| d.to.clone()).collect();
    assert_eq!(tokens.len(), 249, "each device exactly once");
    assert!(
        !tokens.contains(&token(7)),
        "the inactive device is left out"
    );
    let d = &delivered[0];
    assert_eq!(
        (d.title.as_deref(), d.body.as_deref()),
        (Some("Hello"), Some("World"))
    );
    assert_eq!(d.data, Some(json!({"screen": "news", "id": 3})));
    let requests = svc.expo.requests();
    assert!(requests.iter().all(|r| r.recipients <= 100), "{requests:?}");
    assert_eq!(requests.len(), 3);
    assert!(
        requests.iter().any(|r| r.gzipped),
        "large bodies go gzipped"
    );
    assert_eq!(svc.expo.stats().refused, 0);
}

#[tokio::test]
async fn filters_pick_devices_by_type_locale_app_version_and_token() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..6).map(|i| {
        let mut d = device(i); // even: ios, odd: android
        d.locale = Set(Some(if i < 3 { "en-US" } else { "de-DE" }.to_owned()));
        d.app_version = Set(Some(if i % 3 == 0 { "2.0" } else { "1.0" }.to_owned()));
        d
    }))
    .await;
    let cases = [
        (json!({"device_type": "android"}), vec![1, 3, 5]),
        (json!({"locale": "de-DE"}), vec![3, 4, 5]),
        (json!({"app_version": "2.0"}), vec![0, 3]),
        (json!({"device_type": "ios", "locale": "en-US"}), vec![0, 2]),
        (
            json!({"push_tokens": [token(4), token(5), token(99)]}),
            vec![4, 5],
        ),
    ];
    for (target, want) in cases {
        let before = svc.expo.delivered().len();
        let r = svc
            .send(&admin, json!({"title": "t", "body": "b", "target": target}))
            .await;
        assert_eq!(r.status, 202, "{}", r.text);
        assert_eq!(r.body["recipients"], want.len(), "{target}");
        let id = r.body["id"].as_str().unwrap().to_owned();
        svc.wait_sent(&admin, &id, WITHIN).await;
        let mut got: Vec<String> = svc.expo.delivered()[before..]
            .iter()
            .map(|d| d.to.clone())
            .collect();
        got.sort();
        let want: Vec<String> = want.into_iter().map(token).collect();
        assert_eq!(got, want, "{target}");
    }
}

#[tokio::test]
async fn a_send_that_would_reach_no_device_is_refused_and_nothing_is_stored() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    let at = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    for body in [
        json!({"title": "t", "body": "b"}),
        json!({"title": "t", "body": "b", "send_at": at}),
        json!({"title": "t", "body": "b", "local_time": "09:30"}),
    ] {
        let r = svc.send(&admin, body.clone()).await;
        assert_eq!(
            (r.status, r.body["code"].as_str()),
            (400, Some("svc_push_no_recipients")),
            "{body}: {}",
            r.text
        );
        assert!(
            r.body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("would reach no one")
        );
    }
    let list = svc
        .admin_call(Method::GET, "/sends", admin.auth(), None)
        .await;
    assert_eq!(list.body["total"], 0, "nothing stored: {}", list.text);
    svc.registered(0).await;
    let r = svc.send(&admin, json!({"title": "t", "body": "b"})).await;
    assert_eq!(
        (r.status, r.body["recipients"].as_i64()),
        (202, Some(1)),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn invalid_sends_are_400_naming_the_field() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    let cases = [
        ("title", "rest_missing_callback_param", json!({"body": "b"})),
        ("body", "rest_missing_callback_param", json!({"title": "t"})),
        (
            "title",
            "rest_invalid_param",
            json!({"title": 5, "body": "b"}),
        ),
        (
            "data",
            "rest_invalid_param",
            json!({"title": "t", "body": "b", "data": "x"}),
        ),
        (
            "target",
            "rest_invalid_param",
            json!({"title": "t", "body": "b", "target": {"os": "ios"}}),
        ),
        (
            "target",
            "rest_invalid_param",
            json!({"title": "t", "body": "b", "target": {"push_tokens": ["nope"]}}),
        ),
        (
            "send_at",
            "rest_invalid_param",
            json!({"title": "t", "body": "b", "send_at": "next week"}),
        ),
        (
            "local_time",
            "rest_invalid_param",
            json!({"title": "t", "body": "b", "local_time": "25:00"}),
        ),
    ];
    for (field, code, body) in cases {
        let r = svc.send(&admin, body.clone()).await;
        assert_eq!((r.status, r.code()), (400, code), "{body}: {}", r.text);
        assert!(
            r.body["message"].as_str().unwrap().contains(field),
            "{body}: {}",
            r.text
        );
    }
    let r = svc.send(&admin, json!([1])).await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_until_accepted() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..5).map(device)).await;
    svc.expo.fail_next(&[429, 503, 502]);
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    svc.wait_sent(&admin, &id, WITHIN).await;
    assert_eq!(
        svc.expo.delivered().len(),
        5,
        "each once, after three refusals"
    );
    assert_eq!(svc.expo.requests().len(), 1);
}

#[tokio::test]
async fn a_400_from_expo_is_never_retried() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..5).map(device)).await;
    svc.expo.fail_next(&[400, 400]);
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    let view = svc.wait_sent(&admin, &id, WITHIN).await;
    assert_eq!(view["progress"]["failed"], 5);
    assert_eq!(view["progress"], svc.recount(&id).await);
    svc.app.jobs_drained().await;
    assert!(svc.expo.delivered().is_empty());
    assert_eq!(svc.expo.fail_pending(), 1, "one 400 consumed, no retry");
    let stats = svc.stats(&admin).await;
    assert_eq!(stats["deliveries"]["ticket_errors"]["VALIDATION_ERROR"], 5);
}

#[tokio::test]
async fn device_not_registered_in_a_ticket_deactivates_the_device() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..3).map(device)).await;
    svc.expo.ticket_error(&token(1), "DeviceNotRegistered");
    svc.expo.ticket_error(&token(2), "MessageTooBig");
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    let view = svc.wait_sent(&admin, &id, WITHIN).await;
    assert_eq!(
        (
            view["progress"]["sent"].as_i64(),
            view["progress"]["failed"].as_i64()
        ),
        (Some(1), Some(2))
    );
    assert_eq!(svc.status_of(&token(1)).await.body["active"], false);
    assert_eq!(
        svc.status_of(&token(2)).await.body["active"],
        true,
        "MessageTooBig is about the message"
    );
    assert_eq!(
        svc.device_row(&token(1))
            .await
            .unwrap()
            .inactive_reason
            .as_deref(),
        Some("DeviceNotRegistered")
    );
    let stats = svc.stats(&admin).await;
    assert_eq!(
        stats["deliveries"]["ticket_errors"],
        json!({"DeviceNotRegistered": 1, "MessageTooBig": 1})
    );
    assert_eq!(stats["deliveries"]["sent"], 1);
    // The next send leaves it out.
    let r = svc.send(&admin, json!({"title": "t", "body": "b"})).await;
    assert_eq!(r.body["recipients"], 2);
}

#[tokio::test]
async fn the_access_token_goes_along_as_a_bearer_token() {
    let svc = Svc::with(&[("KEEL_EXPO_ACCESS_TOKEN", "expo-secret".into())]).await;
    let admin = svc.push_admin().await;
    svc.seed((0..1).map(device)).await;
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    svc.wait_sent(&admin, &id, WITHIN).await;
    assert_eq!(
        svc.expo.requests()[0].authorization.as_deref(),
        Some("Bearer expo-secret")
    );
}

#[tokio::test]
async fn stats_count_devices_and_deliveries() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..4).map(|i| {
        let mut d = device(i);
        d.app_version = Set((i != 3).then(|| "1.0.0".to_owned()));
        d.active = Set(i != 2);
        d
    }))
    .await;
    let s = svc.stats(&admin).await;
    assert_eq!(
        s["devices"],
        json!({"total": 4, "active": 3, "inactive": 1,
               "by_type": {"ios": 2, "android": 2},
               "by_app_version": {"1.0.0": 3, "unknown": 1}})
    );
    assert_eq!(s["deliveries"]["queued"], 0);
    let at = Utc::now() + chrono::Duration::hours(1);
    svc.sent(
        &admin,
        json!({"title": "t", "body": "b", "send_at": at.to_rfc3339()}),
    )
    .await;
    let s = svc.stats(&admin).await;
    assert_eq!(s["deliveries"]["queued"], 3);
    assert_eq!(s["deliveries"]["sent"], 0);
}

#[tokio::test]
async fn a_token_in_the_seeds_shape_goes_to_expo_exactly_as_stored() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    let t = "ProviderPushToken[opaque-VALUE_42]";
    let r = svc
        .register(json!({"push_token": t, "device_type": "ios"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let id = svc.sent(&admin, json!({"title": "t", "body": "b"})).await;
    svc.wait_sent(&admin, &id, WITHIN).await;
    let to: Vec<String> = svc.expo.delivered().into_iter().map(|d| d.to).collect();
    assert_eq!(to, [t]);
}

#[tokio::test]
async fn a_device_unregistered_after_a_send_was_scheduled_does_not_receive_it() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    let tokens: Vec<String> = futures::future::join_all((0..3).map(|i| svc.registered(i))).await;
    let at = (Utc::now() + chrono::Duration::seconds(3)).to_rfc3339();
    let id = svc
        .sent(&admin, json!({"title": "t", "body": "b", "send_at": at}))
        .await;
    let r = svc
        .app
        .http
        .delete(svc.url("/register"))
        .query(&[("push_token", &tokens[1])])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let view = svc.wait_sent(&admin, &id, WITHIN).await;
    assert_eq!(
        view["recipients"], 3,
        "it was a recipient when the send was made"
    );
    assert_eq!(view["progress"]["sent"], 2);
    assert_eq!(view["progress"]["skipped"], 1);
    svc.assert_progress_recounts(&admin, &id).await;
    let to: HashSet<String> = svc.expo.delivered().into_iter().map(|d| d.to).collect();
    assert_eq!(to, HashSet::from([tokens[0].clone(), tokens[2].clone()]));
}

#[tokio::test]
async fn a_device_reported_gone_by_a_receipt_is_skipped_by_a_send_scheduled_before() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..3).map(device)).await;
    let due = Utc::now() + chrono::Duration::seconds(6);
    let later = svc
        .sent(
            &admin,
            json!({"title": "later", "body": "b", "send_at": due.to_rfc3339()}),
        )
        .await;
    svc.expo.receipt_error(&token(0), "DeviceNotRegistered");
    let now = svc.sent(&admin, json!({"title": "now", "body": "b"})).await;
    svc.wait_sent(&admin, &now, WITHIN).await;
    until(WITHIN, "the receipt deactivates the device", || async {
        svc.status_of(&token(0)).await.body["active"] == false
    })
    .await;
    assert!(
        Utc::now() < due,
        "the receipt came in only after the later send was due; the test proves nothing"
    );
    let view = svc.wait_sent(&admin, &later, WITHIN).await;
    assert_eq!(view["progress"]["skipped"], 1);
    assert_eq!(view["progress"]["sent"], 2);
    let got_later: Vec<String> = svc
        .expo
        .delivered()
        .into_iter()
        .filter(|d| d.title.as_deref() == Some("later"))
        .map(|d| d.to)
        .collect();
    assert_eq!(got_later.len(), 2);
    assert!(!got_later.contains(&token(0)));
}
