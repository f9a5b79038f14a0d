//! Providers failing: GetStream answering 5xx or stalling on provision and
//! go-live (502 within the outbound budget, nothing half-stored); Discord
//! refusing the live notification with 429 and 5xx (retried, one message);
//! Expo refusing pushes with 429 and 5xx (retried with backoff, each device
//! once).

use std::time::{Duration, Instant};

use keel_platform::sea_orm::{EntityTrait, Set};
use keel_testkit::discord::Refusal;
use keel_testkit::getstream::Delivery;
use serde_json::{Value, json};

use crate::harness::{ORIGIN, Stack, channel_owner};

/// The outbound budget the tests give keel (`KEEL_HTTP_CLIENT_TIMEOUT_SECS`).
const BUDGET: Duration = Duration::from_secs(2);

async fn mutate(api: &str, cookie: &str, name: &str) -> (u16, Value, Duration) {
    let started = Instant::now();
    let r = reqwest::Client::new()
        .post(format!("{api}/api/trpc/{name}"))
        .header("origin", ORIGIN)
        .header("cookie", cookie)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (
        status,
        r.json().await.unwrap_or_default(),
        started.elapsed(),
    )
}

async fn owner_only(api: &str) -> String {
    let http = reqwest::Client::new();
    let r = http
        .post(format!("{api}/api/trpc/setup.complete"))
        .header("origin", ORIGIN)
        .json(&json!({"code": crate::harness::SETUP_CODE, "email": "o@example.com", "password": "correct horse battery", "title": "T"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    keel_testkit::session::cookie(r.headers())
}

#[tokio::test]
async fn getstream_failing_or_stalling_is_a_bounded_502_and_nothing_is_half_stored() {
    let stack = Stack::start().await;
    let budget = [(
        "KEEL_HTTP_CLIENT_TIMEOUT_SECS",
        BUDGET.as_secs().to_string(),
    )];
    let keel = stack.serve(&["channel-api"], &budget).await;
    let api = keel.url("channel-api").to_owned();
    let cookie = owner_only(&api).await;
    let call = "/api/v2/video/call/livestream/channel";
    let s = &stack.stream;
    let mut figures = Vec::new();
    type Fault<'a> = Box<dyn Fn() + 'a>;
    let scenarios: [(&str, Fault<'_>); 3] = [
        (
            "the call stalls 30 s",
            Box::new(|| s.stall_path(call, Duration::from_secs(30), 10)),
        ),
        (
            "the call answers 503",
            Box::new(|| s.fail_path(call, 503, 10)),
        ),
        (
            "the chat answers 500 after the call",
            Box::new(|| s.fail_path("/chat/channels", 500, 10)),
        ),
    ];
    for (what, fault) in &scenarios {
        fault();
        let (status, body, took) = mutate(&api, &cookie, "stream.provision").await;
        figures.push(format!("  stream.provision, {what}: {status} in {took:?}"));
        assert_eq!(
            (status, body["error"]["data"]["code"].as_str()),
            (502, Some("BAD_GATEWAY")),
            "{what}: {body}"
        );
        assert!(took < BUDGET + Duration::from_secs(1), "{what}: {took:?}");
        let c = keel_channel::entity::channel_config::Entity::find()
            .one(stack.platform().await.db.read())
            .await
            .unwrap()
            .unwrap();
        assert!(
            c.stream_call_id.is_none() && c.rtmps_url.is_none() && c.chat_channel_cid.is_none(),
            "{what}: half-stored {c:?}"
        );
        s.heal();
    }
    // Going live: the call is provisioned first, then go_live stalls.
    let (status, _, _) = mutate(&api, &cookie, "stream.provision").await;
    assert_eq!(status, 200);
    s.stall_path("/go_live", Duration::from_secs(30), 10);
    let (status, body, took) = mutate(&api, &cookie, "stream.goLive").await;
    figures.push(format!(
        "  stream.goLive, go_live stalls 30 s: {status} in {took:?}"
    ));
    assert_eq!(status, 502, "{body}");
    assert!(took < BUDGET + Duration::from_secs(1), "{took:?}");
    assert!(!s.is_live("livestream:channel"));
    s.heal();
    let (status, _, took) = mutate(&api, &cookie, "stream.goLive").await;
    figures.push(format!(
        "  stream.goLive once GetStream answers: {status} in {took:?}"
    ));
    assert_eq!(status, 200);
    println!(
        "GetStream failing, outbound budget {BUDGET:?} (KEEL_HTTP_CLIENT_TIMEOUT_SECS):\n{}",
        figures.join("\n")
    );
}

#[tokio::test]
async fn discord_refusing_the_live_notification_is_retried_and_posts_once() {
    let stack = Stack::start().await;
    let keel = stack.serve(&["channel-api"], &[]).await;
    let api = keel.url("channel-api").to_owned();
    channel_owner(&api).await;
    let refusals = [
        Refusal::RateLimited(0.5),
        Refusal::Status(502),
        Refusal::Status(500),
        Refusal::RateLimited(0.2),
    ];
    stack.discord.refuse_next(&refusals);
    let started = Instant::now();
    let e = keel_testkit::FakeStream::event("call.live_started", "livestream:channel", json!({}));
    let r = stack
        .stream
        .deliver(
            &format!("{api}/api/webhooks/stream"),
            &e,
            Delivery::default(),
        )
        .await;
    assert_eq!(r.status(), 200);
    let d = stack.discord.clone();
    let posted = keel_testkit::eventually(Duration::from_secs(30), || {
        (!d.posted().is_empty()).then(Instant::now)
    })
    .await
    .expect("the notification was posted");
    keel_testkit::jobs_drained(&stack.platform().await.db).await;
    let refused = stack.discord.refused();
    println!(
        "Discord refused the live notification {} times ({:?}); posted {:?} after the live start; posts: {}",
        refused.len(),
        refused.iter().map(|r| r.1).collect::<Vec<_>>(),
        posted - started,
        stack.discord.posted().len()
    );
    assert_eq!(refused.len(), refusals.len());
    assert_eq!(stack.discord.posted().len(), 1, "exactly one message");
    let waited = refused[1].0 - refused[0].0;
    assert!(
        waited >= Duration::from_millis(450),
        "retry_after honoured: {waited:?}"
    );
}

#[tokio::test]
async fn expo_refusing_pushes_is_retried_with_backoff_and_each_device_gets_one() {
    use keel_svc::entity::push_device;
    let stack = Stack::start().await;
    let keel = stack.serve(&["svc"], &[]).await;
    stack.prepare_svc().await;
    let p = stack.platform().await;
    let now = chrono::Utc::now();
    let devices: Vec<_> = (0..300)
        .map(|i| push_device::ActiveModel {
            push_token: Set(format!("ExponentPushToken[fault{i:04}]")),
            device_type: Set("ios".to_owned()),
            device_model: Set(None),
            os_version: Set(None),
            app_version: Set(None),
            locale: Set(None),
            timezone: Set(None),
            user_label: Set(None),
            active: Set(true),
            inactive_reason: Set(None),
            app_id: Set("seed".to_owned()),
            registered_at: Set(now),
            updated_at: Set(now),
        })
        .collect();
    push_device::Entity::insert_many(devices)
        .exec_without_returning(p.db.write())
        .await
        .unwrap();
    keel_svc::domain::admin::add_user(&p.db, "pusher", Some("login-password-1".into()), true)
        .await
        .unwrap();
    let password = keel_svc::domain::admin::add_app_password(&p.db, "pusher", "faults")
        .await
        .unwrap();
    stack.expo.fail_next(&[429, 503, 502, 429, 500]);
    let started = Instant::now();
    let r: Value = reqwest::Client::new()
        .post(format!("{}/send", keel.url("svc")))
        .basic_auth("pusher", Some(&password))
        .json(&json!({"title": "t", "body": "b"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["recipients"], 300, "{r}");
    let expo = stack.expo.clone();
    let done = keel_testkit::eventually(Duration::from_secs(60), || {
        (expo.delivered().len() >= 300).then(Instant::now)
    })
    .await
    .unwrap_or_else(|| panic!("delivered {} of 300", stack.expo.delivered().len()));
    keel_testkit::jobs_settled(&p.db).await;
    let per_token = stack.expo.per_token();
    println!(
        "Expo refused 5 requests (429, 503, 502, 429, 500); 300 devices reached in {:?}; {} send requests answered 200; most deliveries to one device: {}",
        done - started,
        stack.expo.requests().len(),
        per_token.values().max().copied().unwrap_or(0)
    );
    assert_eq!(per_token.len(), 300);
    assert!(per_token.values().all(|n| *n == 1), "a device got two");
}
