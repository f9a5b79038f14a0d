//! Two nodes on one PostgreSQL and one Redis: the same `call.live_started`
//! delivered to both at once makes one stream session and one
//! notification, and each cron tick runs once.

use std::time::Duration;

use keel_platform::sea_orm::{EntityTrait, PaginatorTrait};
use keel_testkit::getstream::Delivery;
use serde_json::{Value, json};

use crate::harness::{Stack, channel_owner};

#[tokio::test]
async fn two_nodes_given_the_same_event_at_once_act_on_it_once() {
    if keel_testkit::db::postgres_url().is_none() {
        println!("two nodes on PostgreSQL and Redis: runs in the PostgreSQL pass");
        return;
    }
    let stack = Stack::start().await;
    let env = [
        ("REDIS_URL", keel_testkit::redis_url()),
        (
            "KEEL_REDIS_PREFIX",
            format!("keel-faults:{}:", uuid::Uuid::new_v4().simple()),
        ),
        ("KEEL_CHANNEL_SAMPLER_CRON", "* * * * * *".to_owned()),
    ];
    let a = stack.serve(&["channel-api"], &env).await;
    let b = stack.serve(&["channel-api"], &env).await;
    channel_owner(a.url("channel-api")).await;
    stack.stream.set_viewers(&[("viewer", 3)], 1);
    let live =
        keel_testkit::FakeStream::event("call.live_started", "livestream:channel", json!({}));
    let deliver = |node: &keel_testkit::process::KeelProcess, id: &str| {
        let url = format!("{}/api/webhooks/stream", node.url("channel-api"));
        let d = Delivery {
            webhook_id: Some(id.to_owned()),
            ..Default::default()
        };
        let (stream, live) = (stack.stream.clone(), live.clone());
        async move {
            let r = stream.deliver(&url, &live, d).await;
            assert_eq!(r.status(), 200);
            r.json::<Value>().await.unwrap()["effect"].clone()
        }
    };
    // One delivery reaching both nodes, and a second delivery of the same
    // event (another id) at the same moment.
    let (x, y, z) = tokio::join!(deliver(&a, "d-1"), deliver(&b, "d-1"), deliver(&b, "d-2"));
    let p = stack.platform().await;
    // Let the sampler tick a few times on both nodes.
    let samples = keel_testkit::eventually_async(Duration::from_secs(20), || async {
        let n = keel_channel::entity::viewer_sample::Entity::find()
            .count(p.db.read())
            .await
            .unwrap();
        (n >= 3).then_some(n)
    })
    .await
    .expect("the sampler ticked");
    keel_testkit::jobs_settled(&p.db).await;
    let sessions = keel_channel::entity::stream_session::Entity::find()
        .count(p.db.read())
        .await
        .unwrap();
    let posts = keel_testkit::eventually(Duration::from_secs(20), || {
        let n = stack.discord.posted().len();
        (n >= 1).then_some(n)
    })
    .await
    .unwrap_or(0);
    drop((a, b));
    let samples_now = keel_channel::entity::viewer_sample::Entity::find()
        .count(p.db.read())
        .await
        .unwrap();
    let gets = stack
        .stream
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path == "/api/v2/video/call/livestream/channel")
        .count();
    println!(
        "two nodes: effects {x}, {y}, {z}; sessions {sessions}; notifications {posts}; sampler: {samples_now} samples from {gets} provider reads (at least {samples} seen)"
    );
    let effects = [x, y, z];
    assert_eq!(
        effects.iter().filter(|e| **e == "live_started").count(),
        1,
        "{effects:?}"
    );
    assert_eq!(sessions, 1);
    assert_eq!(posts, 1);
    assert_eq!(
        u64::try_from(gets).unwrap(),
        samples_now,
        "one provider read per tick: no tick ran on both nodes"
    );
}
