//! The emote set: fetched from the three sources, merged by precedence;
//! a failing source keeps its emotes, an unknown channel has none.

use keel_channel::jobs::emote_refresh::EmoteRefresh;
use keel_testkit::emotes::Answer;
use serde_json::Value;

use crate::helpers::Channel;

async fn emotes(ch: &Channel) -> Vec<Value> {
    let r = ch.query("emotes.list", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.data()["emotes"].as_array().unwrap().clone()
}

fn names(e: &[Value]) -> Vec<String> {
    e.iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn refresh(ch: &Channel) {
    keel_platform::jobs::enqueue(ch.app.platform().db.write(), &EmoteRefresh {})
        .await
        .unwrap();
    ch.app.jobs_settled().await;
}

#[tokio::test]
async fn the_set_is_fetched_at_start_and_merged_by_precedence() {
    let ch = Channel::start().await;
    // At start the set is empty: one refresh runs.
    let got = keel_testkit::eventually_async(std::time::Duration::from_secs(10), || async {
        let e = emotes(&ch).await;
        (!e.is_empty()).then_some(e)
    })
    .await
    .expect("the first refresh ran at start");
    let n = names(&got);
    for expected in [
        "SevenChannel",
        "BttvChannel",
        "BttvShared",
        "FfzRoom",
        "SevenGlobal",
        "BttvGlobal",
        "FfzGlobal",
    ] {
        assert!(n.contains(&expected.to_owned()), "{expected} in {n:?}");
    }
    assert!(
        !n.contains(&"NotDefault".to_owned()),
        "FFZ's non-default global sets are left out"
    );
    let shared: Vec<&Value> = got.iter().filter(|e| e["name"] == "Shared").collect();
    assert_eq!(shared.len(), 1, "each name once");
    assert_eq!(shared[0]["provider"], "7tv");
    assert_eq!(
        shared[0]["scope"], "channel",
        "the channel's own wins over global"
    );
    assert_eq!(shared[0]["url"], "https://cdn.7tv.app/emote/7c1/1x.webp");
    let ffz = got.iter().find(|e| e["name"] == "FfzGlobal").unwrap();
    assert_eq!(ffz["url"], "https://cdn.frankerfacez.com/emote/1/1");
}

#[tokio::test]
async fn a_failing_source_keeps_its_emotes_and_an_unknown_channel_has_none() {
    let ch = Channel::start().await;
    refresh(&ch).await;
    assert!(names(&emotes(&ch).await).contains(&"SevenGlobal".to_owned()));
    ch.emotes.answer("7tv-global", Answer::Fail);
    ch.emotes.answer("bttv-channel", Answer::NotFound);
    refresh(&ch).await;
    let n = names(&emotes(&ch).await);
    assert!(
        n.contains(&"SevenGlobal".to_owned()),
        "kept through the failure: {n:?}"
    );
    assert!(
        !n.contains(&"BttvChannel".to_owned()),
        "a 404 channel has none: {n:?}"
    );
    assert!(n.contains(&"FfzRoom".to_owned()));
}

#[tokio::test]
async fn without_a_twitch_id_only_global_sets_are_fetched() {
    let ch = Channel::with(&[("KEEL_CHANNEL_TWITCH_ID", String::new())]).await;
    refresh(&ch).await;
    let n = names(&emotes(&ch).await);
    assert!(
        n.contains(&"SevenGlobal".to_owned()) && !n.contains(&"SevenChannel".to_owned()),
        "{n:?}"
    );
    assert!(
        ch.emotes
            .hits()
            .iter()
            .all(|h| !h.contains("/user/") && !h.contains("/room/"))
    );
}
