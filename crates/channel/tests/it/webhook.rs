//! The provider's webhook: signatures, redeliveries, the live cycle.

use keel_channel::entity::stream_session;
use keel_platform::sea_orm::{ConnectionTrait, EntityTrait, QueryOrder};
use keel_testkit::FakeStream;
use keel_testkit::getstream::Delivery;
use serde_json::json;

use crate::helpers::{Channel, finish};

async fn sessions(ch: &Channel) -> Vec<stream_session::Model> {
    stream_session::Entity::find()
        .order_by_asc(stream_session::Column::StartedAt)
        .all(ch.app.platform().db.read())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_delivery_without_a_valid_key_and_signature_is_401_and_changes_nothing() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    let e = FakeStream::event("call.live_started", &ch.cid(), json!({}));
    let forged = [
        Delivery {
            unsigned: true,
            ..Default::default()
        },
        Delivery {
            secret: Some("not-the-secret"),
            ..Default::default()
        },
        Delivery {
            api_key: Some("another-app"),
            ..Default::default()
        },
    ];
    for d in forged {
        let r = ch.deliver(&e, d.clone()).await;
        assert_eq!(
            (r.status, r.code()),
            (401, "UNAUTHORIZED"),
            "{d:?}: {}",
            r.text
        );
    }
    let r = finish(
        ch.app
            .http
            .post(ch.url("/api/webhooks/stream"))
            .json(&e)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 401);
    assert!(sessions(&ch).await.is_empty());
    assert_eq!(ch.is_live().await["isLive"], false);
    assert!(ch.discord.posted().is_empty());
}

#[tokio::test]
async fn a_gzip_body_is_verified_over_its_uncompressed_bytes() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    let e = FakeStream::event("call.live_started", &ch.cid(), json!({}));
    let r = ch
        .deliver(
            &e,
            Delivery {
                gzip: true,
                ..Default::default()
            },
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["effect"], "live_started");
}

#[tokio::test]
async fn a_live_start_redelivered_or_sent_twice_at_once_counts_once() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    let e = FakeStream::event("call.live_started", &ch.cid(), json!({}));
    let with_id = Delivery {
        webhook_id: Some("wh-1".into()),
        ..Default::default()
    };
    let (a, b) = tokio::join!(
        ch.deliver(&e, with_id.clone()),
        ch.deliver(&e, Delivery::default())
    );
    assert_eq!((a.status, b.status), (200, 200));
    let again = ch.deliver(&e, with_id).await;
    assert_eq!(again.body["effect"], "duplicate");
    let again = ch.deliver(&e, Delivery::default()).await;
    assert_eq!(again.body["effect"], "nothing", "already live");
    assert_eq!(sessions(&ch).await.len(), 1);
    ch.app.jobs_settled().await;
    assert_eq!(ch.discord.posted().len(), 1, "one notification");
}

#[tokio::test]
async fn a_delivery_that_fails_half_way_is_applied_when_the_provider_retries_it() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    let db = ch.app.platform().db.write();
    // The live start cannot open its session: the delivery fails after
    // its id was read.
    db.execute_unprepared("ALTER TABLE stream_sessions RENAME TO stream_sessions_away")
        .await
        .unwrap();
    let e = FakeStream::event("call.live_started", &ch.cid(), json!({}));
    let delivery = Delivery {
        webhook_id: Some("wh-retried".into()),
        ..Default::default()
    };
    let failed = ch.deliver(&e, delivery.clone()).await;
    assert_eq!(failed.status, 500, "{}", failed.text);
    db.execute_unprepared("ALTER TABLE stream_sessions_away RENAME TO stream_sessions")
        .await
        .unwrap();
    assert_eq!(ch.is_live().await["isLive"], false);

    let retried = ch.deliver(&e, delivery.clone()).await;
    assert_eq!(
        (retried.status, retried.body["effect"].as_str()),
        (200, Some("live_started")),
        "{}",
        retried.text
    );
    ch.until_live(true).await;
    let again = ch.deliver(&e, delivery).await;
    assert_eq!(again.body["effect"], "duplicate");
    assert_eq!(sessions(&ch).await.len(), 1);
    ch.app.jobs_settled().await;
    assert_eq!(ch.discord.posted().len(), 1, "one notification");
}

#[tokio::test]
async fn each_way_the_provider_reports_an_end_closes_the_session() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    let ends = [
        ("call.session_ended", json!({})),
        ("call.ended", json!({})),
        (
            "call.updated",
            json!({"call": {"cid": "livestream:channel", "backstage": true}}),
        ),
    ];
    for (kind, extra) in ends {
        let r = ch.event("call.live_started", json!({"call": {"cid": "livestream:channel", "backstage": false, "session": {"participants_count_by_role": {"viewer": 5}}}})).await;
        assert_eq!(r.body["effect"], "live_started", "{kind}");
        ch.until_live(true).await;
        let r = ch.event(kind, extra).await;
        assert_eq!(r.body["effect"], "ended", "{kind}: {}", r.text);
        ch.until_live(false).await;
    }
    let all = sessions(&ch).await;
    assert_eq!(all.len(), 3);
    assert!(
        all.iter()
            .all(|s| s.ended_at.is_some() && s.peak_viewers == 5),
        "{all:?}"
    );
    // An update that is not a return to backstage is not an end.
    ch.event("call.live_started", json!({})).await;
    let r = ch
        .event(
            "call.updated",
            json!({"call": {"cid": "livestream:channel", "backstage": false}}),
        )
        .await;
    assert_eq!(r.body["effect"], "nothing");
    ch.until_live(true).await;
}

#[tokio::test]
async fn events_of_another_call_or_another_type_change_nothing() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    let other = FakeStream::event("call.live_started", "livestream:someone-else", json!({}));
    let r = ch.deliver(&other, Delivery::default()).await;
    assert_eq!(
        (r.status, r.body["effect"].as_str()),
        (200, Some("nothing"))
    );
    let r = ch.event("call.member_added", json!({})).await;
    assert_eq!(
        (r.status, r.body["effect"].as_str()),
        (200, Some("nothing"))
    );
    assert!(sessions(&ch).await.is_empty());
}

#[tokio::test]
async fn before_provisioning_every_event_is_received_and_ignored() {
    let ch = Channel::start().await;
    ch.set_up().await;
    let r = ch.event("call.live_started", json!({})).await;
    assert_eq!(
        (r.status, r.body["effect"].as_str()),
        (200, Some("nothing"))
    );
}

#[tokio::test]
async fn a_signed_body_that_is_not_json_is_400() {
    let ch = Channel::start().await;
    let r = finish(
        ch.stream
            .deliver_raw(
                &ch.url("/api/webhooks/stream"),
                b"not json".to_vec(),
                Delivery::default(),
            )
            .await,
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"), "{}", r.text);
}
