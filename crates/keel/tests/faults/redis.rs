//! Redis cut and restored under load: everything keeps serving without it
//! (rate limits count per node, the session cache reads the database,
//! `/readyz` says degraded), `stream.isLive` follows the live state within
//! its poll interval, and nothing stays stuck after Redis returns.

use std::sync::Arc;
use std::time::{Duration, Instant};

use keel_testkit::TcpProxy;
use serde_json::{Value, json};

use crate::harness::{Stack, account, channel_owner};
use crate::load::{Kind, Load, Targets, tally};
use crate::postgres::origin;
use crate::stored;

const KINDS: [Kind; 4] = [Kind::Event, Kind::Goal, Kind::Submission, Kind::Webhook];

async fn readiness(url: &str) -> (u16, String) {
    let r = reqwest::get(format!("{}/readyz", origin(url)))
        .await
        .unwrap();
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or_default();
    (
        status,
        body["status"].as_str().unwrap_or_default().to_owned(),
    )
}

async fn is_live(channel_api: &str) -> bool {
    let v: Value = reqwest::get(format!("{channel_api}/api/trpc/stream.isLive"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["result"]["data"]["isLive"] == true
}

/// How long until `stream.isLive` says `live`.
async fn until_live(channel_api: &str, live: bool) -> Duration {
    let started = Instant::now();
    let seen = keel_testkit::eventually_async(Duration::from_secs(10), || async {
        (is_live(channel_api).await == live).then_some(())
    })
    .await;
    assert!(seen.is_some(), "isLive did not become {live} within 10 s");
    started.elapsed()
}

#[tokio::test]
async fn a_redis_outage_leaves_every_service_serving_and_heals_by_itself() {
    let stack = Stack::start().await;
    let redis = TcpProxy::start("127.0.0.1:6379".parse().unwrap()).await;
    let services = ["accounts", "usage-alerts", "svc", "channel-api"];
    let env = [
        ("REDIS_URL", format!("redis://{}", redis.addr)),
        (
            "KEEL_REDIS_PREFIX",
            format!("keel-faults:{}:", uuid::Uuid::new_v4().simple()),
        ),
    ];
    let keel = stack.serve(&services, &env).await;
    stack.prepare_svc().await;
    let api = keel.url("channel-api").to_owned();
    channel_owner(&api).await;
    let token = account(keel.url("accounts"), "faultredis").await;
    let targets = Arc::new(Targets {
        usage_alerts: keel.url("usage-alerts").to_owned(),
        accounts: keel.url("accounts").to_owned(),
        svc: keel.url("svc").to_owned(),
        channel_api: api.clone(),
        account_token: token.clone(),
        appcheck: stack.appcheck(),
        stream: stack.stream.clone(),
    });
    let load = Load::start(targets, &KINDS, 2);
    load.until(Duration::from_secs(30), "writes before the cut", |a| {
        KINDS.iter().all(|k| tally(a, *k).acknowledged >= 10)
    })
    .await;

    let cut = Instant::now();
    redis.go_down();
    let during: Vec<(u16, String)> = {
        let mut v = Vec::new();
        for u in services.iter().map(|s| keel.url(s)) {
            v.push(readiness(u).await);
        }
        v
    };
    // The stream goes live while Redis is away.
    let live = stack
        .stream
        .deliver(
            &format!("{api}/api/webhooks/stream"),
            &keel_testkit::FakeStream::event("call.live_started", "livestream:channel", json!({})),
            keel_testkit::getstream::Delivery::default(),
        )
        .await;
    assert_eq!(live.status(), 200, "a webhook without Redis");
    let went_live = until_live(&api, true).await;
    let account_status = reqwest::Client::new()
        .get(format!("{}/account", keel.url("accounts")))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    load.until(Duration::from_secs(30), "writes while Redis is away", |a| {
        KINDS.iter().all(|k| {
            a.iter()
                .filter(|x| x.kind == *k && x.at > cut + Duration::from_millis(500))
                .filter(|x| x.status == 200)
                .count()
                >= 10
        })
    })
    .await;
    let down_for = cut.elapsed();

    redis.come_back();
    let back = Instant::now();
    let healed = keel_testkit::eventually_async(Duration::from_secs(20), || async {
        let mut all = true;
        for u in services.iter().map(|s| keel.url(s)) {
            all &= readiness(u).await == (200, "ok".to_owned());
        }
        all.then_some(())
    })
    .await;
    let healed_in = back.elapsed();
    stack
        .stream
        .deliver(
            &format!("{api}/api/webhooks/stream"),
            &keel_testkit::FakeStream::event("call.ended", "livestream:channel", json!({})),
            keel_testkit::getstream::Delivery::default(),
        )
        .await;
    let went_offline = until_live(&api, false).await;
    let answers = load.stop().await;

    let p = stack.platform().await;
    println!(
        "Redis cut for {down_for:?} under 2 clients per write; /readyz during {during:?}; GET /account {account_status}; isLive true {went_live:?} after the live start, false {went_offline:?} after the end; every /readyz ok {healed_in:?} after Redis came back"
    );
    for kind in KINDS {
        let t = tally(&answers, kind);
        let lost = stored::lost(&p, &answers, kind).await;
        println!(
            "  {kind:?}: sent {}, acknowledged {}, refused {} {:?}, lost {}, slowest answer {:?}",
            t.sent,
            t.acknowledged,
            t.unavailable + t.other,
            t.others,
            lost.len(),
            t.slowest
        );
        assert!(lost.is_empty(), "{kind:?}: {lost:?}");
        assert_eq!(
            t.unavailable + t.other,
            0,
            "{kind:?}: refused without Redis"
        );
    }
    assert!(
        during.iter().all(|(s, d)| *s == 200 && d == "degraded"),
        "{during:?}"
    );
    assert_eq!(account_status, 200, "the session check reads the database");
    assert!(healed.is_some(), "/readyz did not say ok again");
}
