use serde_json::json;

use crate::harness::{Browser, CID, Site};

const LIVE: &str = "return document.querySelector('[data-channel]').dataset.live === 'true' && !document.querySelector('#live').hidden && document.querySelector('#offline').hidden";
const OFFLINE: &str = "return document.querySelector('[data-channel]').dataset.live === 'false' && document.querySelector('#live').hidden && !document.querySelector('#offline').hidden";

#[tokio::test]
async fn an_open_page_turns_live_within_a_poll_and_back_to_offline_when_the_session_ends() {
    let site = Site::start().await;
    let cookie = site.set_up().await;
    let b = Browser::start(1280, 900).await;
    b.goto(&site.page("/")).await;
    b.wait_js(OFFLINE, "the page starts offline").await;
    site.stream.set_viewers(&[("viewer", 3)], 1);
    site.go_live(&cookie).await;
    site.webhook(
        "call.session_participant_count_updated",
        json!({"participants_count_by_role": {"viewer": 3}, "anonymous_participant_count": 1}),
    )
    .await;
    // One poll is 10 s; the harness waits up to 20 s.
    b.wait_js(LIVE, "the page turned live").await;
    b.wait_text("#viewer-count", "4 viewers").await;
    b.wait_js(
        "return document.querySelector('#video').currentSrc !== '' || document.querySelector('#video-note').innerText !== 'Connecting to the stream…'",
        "the player started on the provider's playlist",
    )
    .await;
    site.webhook("call.session_ended", json!({})).await;
    b.wait_js(OFFLINE, "the page went back offline without a reload")
        .await;
    b.close().await;
}

#[tokio::test]
async fn a_page_loaded_while_live_is_live_before_any_script_runs() {
    let site = Site::start().await;
    let cookie = site.set_up().await;
    site.go_live(&cookie).await;
    let html = reqwest::get(site.page("/"))
        .await
        .expect("GET /")
        .text()
        .await
        .expect("the page");
    assert!(html.contains(r#"data-live="true""#), "{html}");
    let b = Browser::start(1280, 900).await;
    b.goto(&site.page("/")).await;
    b.wait_js(LIVE, "live at once").await;
    b.close().await;
}

#[tokio::test]
async fn the_chat_shows_messages_as_they_come_with_emotes_and_says_when_it_is_unavailable() {
    let site = Site::start().await;
    site.set_up().await;
    site.stream
        .post_message(CID, "ada", "hello before you came");
    site.wait_for_emotes().await;
    let b = Browser::start(1280, 900).await;
    b.goto(&site.page("/")).await;
    b.wait_text(".messages", "hello before you came").await;
    let watching = keel_testkit::eventually(crate::harness::PATIENCE, || {
        (site.stream.chat_watchers(CID) > 0).then_some(())
    })
    .await;
    assert!(watching.is_some(), "the page watches the chat channel");
    let emote = "SevenGlobal";
    site.stream
        .post_message(CID, "grace", &format!("nice {emote} stream"));
    b.wait_text(".messages", "nice").await;
    b.wait_js(
        &format!("return !!document.querySelector('.messages img.emote[alt=\"{emote}\"]')"),
        "the emote's name became its image",
    )
    .await;
    site.stream.set_chat_down(true);
    b.client.refresh().await.expect("reload");
    b.wait_text(".chat-status", "Chat unavailable").await;
    site.stream.set_chat_down(false);
    b.wait_text(".messages", "nice").await;
    b.close().await;
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    k.sort();
    k
}

#[tokio::test]
async fn the_pages_chat_connects_as_getstreams_js_client_connects_anonymously() {
    let site = Site::start().await;
    site.set_up().await;
    let b = Browser::start(1280, 900).await;
    b.goto(&site.page("/")).await;
    b.wait_text(".chat-status", "No messages yet").await;
    let page = (
        site.stream.chat_connects().remove(0),
        site.stream.chat_queries().remove(0),
    );
    b.close().await;

    // stream-chat 9.53 (npm) against a fake of its own.
    let fake = keel_testkit::FakeStream::start().await;
    let dir = keel_testkit::node::package("crates/keel/tests/provider-sdks");
    keel_testkit::node::run_json(
        &dir,
        "chat.mjs",
        &[&fake.url(), keel_testkit::getstream::API_KEY],
    )
    .await;
    let sdk = (
        fake.chat_connects().remove(0),
        fake.chat_queries().remove(0),
    );

    // The WebSocket: the same parameters, the same anonymous auth, the
    // same payload (the user and request ids are random in both).
    let (pc, sc) = (&page.0, &sdk.0);
    assert_eq!(
        pc.params.keys().collect::<Vec<_>>(),
        sc.params.keys().collect::<Vec<_>>()
    );
    for p in ["stream-auth-type", "authorization", "api_key"] {
        assert_eq!(pc.params[p], sc.params[p], "{p}");
    }
    assert_eq!(keys(&pc.json), keys(&sc.json));
    assert_eq!(
        keys(&pc.json["user_details"]),
        keys(&sc.json["user_details"])
    );
    assert_eq!(pc.json["user_details"]["anon"], true);
    assert_eq!(pc.json["user_id"], pc.json["user_details"]["id"]);
    // The channel query: the same parameters, headers and body.
    let (pq, sq) = (&page.1, &sdk.1);
    assert_eq!(
        pq.params.keys().collect::<Vec<_>>(),
        sq.params.keys().collect::<Vec<_>>()
    );
    assert_eq!(
        pq.headers.keys().collect::<Vec<_>>(),
        sq.headers.keys().collect::<Vec<_>>()
    );
    assert_eq!(
        pq.headers["stream-auth-type"],
        sq.headers["stream-auth-type"]
    );
    assert_eq!(pq.body, sq.body);
    assert_eq!(pq.params["user_id"], pc.json["user_id"], "the same viewer");
}
