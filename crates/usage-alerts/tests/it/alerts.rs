use std::time::Duration;

use keel_platform::sea_orm::EntityTrait;
use keel_testkit::apns::{TEAM_ID, TOPIC};
use keel_testkit::{FakeApns, eventually};
use keel_usage_alerts::domain::thresholds::Kind;
use keel_usage_alerts::entity::delivery::DeliveryStatus;
use keel_usage_alerts::entity::{alert, delivery};
use serde_json::json;

use crate::helpers::{Api, device};

async fn with_apns(apns: &FakeApns) -> Api {
    Api::with(&apns.env()).await
}

async fn pushes(apns: &FakeApns, n: usize) -> Vec<keel_testkit::apns::ApnsRequest> {
    eventually(Duration::from_secs(10), || {
        let r = apns.requests();
        (r.len() >= n).then_some(r)
    })
    .await
    .unwrap_or_else(|| panic!("expected {n} pushes, got {:?}", apns.requests()))
}

async fn deliveries(api: &Api) -> Vec<delivery::Model> {
    delivery::Entity::find()
        .all(api.app.platform().db.read())
        .await
        .unwrap()
}

async fn settled(api: &Api, n: usize) -> Vec<delivery::Model> {
    keel_testkit::eventually_async(Duration::from_secs(10), || async {
        let d = deliveries(api).await;
        (d.len() >= n && d.iter().all(|d| d.status != DeliveryStatus::Pending)).then_some(d)
    })
    .await
    .unwrap_or_else(|| panic!("deliveries did not settle"))
}

#[tokio::test]
async fn crossing_the_default_five_dollars_alerts_every_device_once_a_day() {
    let apns = FakeApns::start().await;
    let api = with_apns(&apns).await;
    api.register("alice", &device(1), "ios", false).await;
    api.register("alice", &device(2), "ios", true).await;
    api.register("alice", &device(3), "watchos", false).await;
    api.register("bob", &device(4), "ios", false).await;
    api.event("alice", "s1", 3.0).await;
    api.event("alice", "s1", 2.0).await;
    api.app.jobs_settled().await;
    assert!(apns.requests().is_empty(), "5.00 is not above 5.00");
    api.event("alice", "s1", 0.5).await;
    let sent = pushes(&apns, 3).await;
    assert_eq!(sent.len(), 3);
    for p in &sent {
        assert!(p.http2, "HTTP/2");
        assert_eq!(p.headers["apns-push-type"], "alert");
        assert_eq!(p.headers["apns-priority"], "10");
        assert!(
            p.headers.contains_key("apns-expiration") && p.headers.contains_key("apns-collapse-id")
        );
        let alert = &p.body["aps"]["alert"];
        assert_eq!(alert["title"], "Daily cost threshold crossed");
        let body = alert["body"].as_str().unwrap();
        assert!(body.contains("$5.50") && body.contains("$5.00"), "{body}");
        assert_eq!(p.body["aps"]["sound"], "default");
    }
    let by = |d: u32| sent.iter().find(|p| p.device_token == device(d)).unwrap();
    assert!(
        !by(1).sandbox && by(2).sandbox && !by(3).sandbox,
        "sandbox devices go to the sandbox host"
    );
    assert_eq!(by(1).headers["apns-topic"], TOPIC);
    assert_eq!(by(3).headers["apns-topic"], format!("{TOPIC}.watchkitapp"));
    assert!(
        sent.iter().all(|p| p.device_token != device(4)),
        "not bob's device"
    );
    let done = settled(&api, 3).await;
    assert!(
        done.iter()
            .all(|d| d.status == DeliveryStatus::Delivered && d.apns_id.is_some()),
        "{done:?}"
    );

    api.event("alice", "s1", 10.0).await;
    api.event("alice", "s2", 10.0).await;
    api.app.jobs_settled().await;
    assert_eq!(apns.requests().len(), 3, "once a day");
}

#[tokio::test]
async fn one_provider_token_signed_by_the_team_key_is_reused() {
    let apns = FakeApns::start().await;
    let api = with_apns(&apns).await;
    for (user, d) in [("alice", 1), ("bob", 2), ("carol", 3)] {
        api.register(user, &device(d), "ios", false).await;
        api.event(user, "s", 6.0).await;
    }
    let sent = pushes(&apns, 3).await;
    let token = &sent[0].provider_token;
    assert!(
        sent.iter().all(|p| &p.provider_token == token),
        "reused, not regenerated per push"
    );
    let header = jsonwebtoken::decode_header(token).unwrap();
    assert_eq!(header.alg, jsonwebtoken::Algorithm::ES256);
    assert_eq!(header.kid.as_deref(), Some(keel_testkit::apns::KEY_ID));
    let claims: serde_json::Value = jsonwebtoken::dangerous::insecure_decode(token)
        .unwrap()
        .claims;
    assert_eq!(claims["iss"], TEAM_ID);
    assert!(
        settled(&api, 3)
            .await
            .iter()
            .all(|d| d.status == DeliveryStatus::Delivered)
    );
}

#[tokio::test]
async fn each_threshold_type_alerts_and_the_lowest_enabled_value_counts() {
    let apns = FakeApns::start().await;
    let api = with_apns(&apns).await;
    api.register("alice", &device(1), "ios", false).await;
    let prefs = json!({"thresholds": [
        {"id": "c", "type": "daily_cost", "value": 100, "isEnabled": true},
        {"id": "c2", "type": "daily_cost", "value": 0.01, "isEnabled": false},
        {"id": "t", "type": "token_count", "value": 1000, "isEnabled": true},
        {"id": "t2", "type": "token_count", "value": 300, "isEnabled": true},
        {"id": "s", "type": "session_count", "value": 2, "isEnabled": true},
    ]});
    assert_eq!(api.post("/preferences", "alice", prefs).await.status, 200);
    api.event("alice", "s1", 1.0).await; // 165 tokens, 1 session
    api.event("alice", "s1", 1.0).await; // 330 tokens > 300
    let sent = pushes(&apns, 1).await;
    assert_eq!(sent[0].body["alert"]["type"], "token_count");
    assert_eq!(
        sent[0].body["aps"]["alert"]["title"],
        "Daily token threshold crossed"
    );
    api.event("alice", "s2", 1.0).await;
    api.event("alice", "s3", 1.0).await; // 3 sessions > 2
    let sent = pushes(&apns, 2).await;
    assert_eq!(sent[1].body["alert"]["type"], "session_count");
    assert_eq!(sent[1].body["alert"]["observed"], 3.0);
    api.app.jobs_settled().await;
    assert_eq!(
        apns.requests().len(),
        2,
        "the disabled 0.01 cost threshold never fires; 100 is not reached"
    );
}

#[tokio::test]
async fn a_410_removes_the_device_and_a_503_is_retried_until_delivered() {
    let apns = FakeApns::start().await;
    let api = with_apns(&apns).await;
    api.register("alice", &device(1), "ios", false).await;
    api.register("alice", &device(2), "ios", false).await;
    api.register("alice", &device(3), "ios", false).await;
    apns.respond(&device(1), 410, "Unregistered");
    apns.respond(&device(2), 503, "ServiceUnavailable");
    apns.respond(&device(2), 429, "TooManyRequests");
    apns.respond(&device(3), 400, "BadDeviceToken");
    api.event("alice", "s", 6.0).await;
    let done = settled(&api, 3).await;
    let status = |d: u32| {
        done.iter()
            .find(|x| x.device_token == device(d))
            .unwrap()
            .clone()
    };
    assert_eq!(
        (status(1).status, status(1).reason.as_deref()),
        (DeliveryStatus::NotDelivered, Some("Unregistered"))
    );
    assert_eq!(
        status(2).status,
        DeliveryStatus::Delivered,
        "{:?}",
        status(2)
    );
    assert_eq!(status(3).reason.as_deref(), Some("BadDeviceToken"));
    let tries = apns
        .requests()
        .iter()
        .filter(|p| p.device_token == device(2))
        .count();
    assert_eq!(tries, 3, "503, 429, then 200");
    let left = api.get("/device", "alice").await.body["devices"].clone();
    let tokens: Vec<&str> = left
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["deviceToken"].as_str().unwrap())
        .collect();
    assert_eq!(
        tokens,
        [device(2).as_str()],
        "410 and BadDeviceToken removed their devices"
    );
}

#[tokio::test]
async fn without_apns_credentials_alerts_are_recorded_as_not_delivered() {
    let api = Api::start().await;
    api.register("alice", &device(1), "ios", false).await;
    api.event("alice", "s", 6.0).await;
    let done = settled(&api, 1).await;
    assert_eq!(done[0].status, DeliveryStatus::NotDelivered);
    assert_eq!(done[0].reason.as_deref(), Some("APNs is not configured"));
}

#[tokio::test]
async fn an_alert_with_no_devices_is_still_recorded() {
    let api = Api::start().await;
    api.event("alice", "s", 6.0).await;
    let alerts = alert::Entity::find()
        .all(api.app.platform().db.read())
        .await
        .unwrap();
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0].threshold_type, Kind::DailyCost);
    assert_eq!(alerts[0].note.as_deref(), Some("no registered devices"));
}

#[tokio::test]
async fn an_alert_is_neither_repeated_nor_lost_across_a_restart() {
    let apns = FakeApns::start().await;
    let mut api = with_apns(&apns).await;
    api.register("alice", &device(1), "ios", false).await;
    api.event("alice", "s", 6.0).await;
    pushes(&apns, 1).await;
    api.app.restart().await;
    api.event("alice", "s", 6.0).await;
    api.app.jobs_settled().await;
    assert_eq!(apns.requests().len(), 1);
}
