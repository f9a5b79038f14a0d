//! The sampler and the viewer report.

use chrono::{Duration, Utc};
use keel_channel::entity::viewer_sample;
use keel_channel::jobs::sample_viewers::SampleViewers;
use keel_platform::sea_orm::{EntityTrait, PaginatorTrait, Set};
use serde_json::json;

use crate::helpers::Channel;

async fn sample(ch: &Channel, tick: chrono::DateTime<Utc>) {
    keel_platform::jobs::enqueue(ch.app.platform().db.write(), &SampleViewers { tick })
        .await
        .unwrap();
    ch.app.jobs_settled().await;
}

#[tokio::test]
async fn while_live_each_tick_samples_the_providers_viewers_and_raises_the_peak() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    let now = Utc::now();
    sample(&ch, now).await;
    let r = ch.query("analytics.viewers", None).await;
    assert_eq!(
        r.data()["current"],
        serde_json::Value::Null,
        "offline: no sample"
    );
    assert_eq!(r.data()["lastSevenDays"], json!([]));

    ch.mutate("stream.goLive", json!({})).await;
    ch.event("call.live_started", json!({})).await;
    ch.until_live(true).await;
    for (i, viewers) in [4, 9, 6].into_iter().enumerate() {
        ch.stream.set_viewers(&[("viewer", viewers - 1)], 1);
        sample(&ch, now + Duration::minutes(i64::try_from(i).unwrap() + 1)).await;
    }
    let r = ch.query("analytics.viewers", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let current = &r.data()["current"];
    let counts: Vec<i64> = current["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["viewers"].as_i64().unwrap())
        .collect();
    assert_eq!(counts, [4, 9, 6]);
    assert_eq!(current["session"]["peakViewers"], 9);
    assert_eq!(
        current["session"]["averageViewers"].as_f64(),
        Some(19.0 / 3.0)
    );
    assert_eq!(ch.is_live().await["viewerCount"], 6);
    ch.event("call.session_ended", json!({})).await;
    ch.until_live(false).await;
    let r = ch.query("analytics.viewers", None).await;
    assert_eq!(r.data()["current"], serde_json::Value::Null);
    assert_eq!(r.data()["sessions"][0]["peakViewers"], 9);
    assert!(r.data()["sessions"][0]["endedAt"].is_string());
    assert_eq!(r.data()["lastSevenDays"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn samples_older_than_seven_days_are_pruned() {
    let ch = Channel::start().await;
    let db = &ch.app.platform().db;
    let old = Utc::now() - Duration::days(8);
    viewer_sample::Entity::insert(viewer_sample::ActiveModel {
        session_id: Set("old-session".into()),
        sampled_at: Set(old),
        viewers: Set(3),
    })
    .exec_without_returning(db.write())
    .await
    .unwrap();
    sample(&ch, Utc::now()).await;
    assert_eq!(
        viewer_sample::Entity::find()
            .count(db.read())
            .await
            .unwrap(),
        0
    );
}
