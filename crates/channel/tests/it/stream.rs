//! Provisioning, credentials, going live and ending, viewer tokens, the
//! provider's failures.

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use keel_platform::sea_orm::ConnectionTrait;
use keel_testkit::getstream::{API_KEY, API_SECRET};
use serde_json::{Value, json};

use crate::helpers::Channel;

fn claims(token: &str) -> Value {
    let mut v = Validation::new(Algorithm::HS256);
    v.required_spec_claims.clear();
    v.validate_exp = false;
    jsonwebtoken::decode::<Value>(token, &DecodingKey::from_secret(API_SECRET.as_bytes()), &v)
        .expect("a token signed with the API secret")
        .claims
}

#[tokio::test]
async fn provisioning_creates_the_call_and_chat_once_and_stores_their_ids() {
    let ch = Channel::start().await;
    let p = ch.provisioned().await;
    assert_eq!(p["streamCallId"], "channel");
    assert_eq!(p["callCid"], "livestream:channel");
    assert_eq!(p["chatChannelCid"], "livestream:channel");
    assert!(p["rtmpsUrl"].as_str().unwrap().starts_with("rtmps://"));
    let again = ch.mutate("stream.provision", json!({})).await;
    assert_eq!(again.data(), &p, "idempotent: the same values");
    let info = ch.query("channel.getInfo", None).await;
    assert_eq!(info.data()["provisioned"], true);
    assert_eq!(info.data()["chatChannelCid"], "livestream:channel");
    assert_eq!(info.data()["callCid"], "livestream:channel");
    assert_eq!(info.data()["streamApiKey"], API_KEY);
    assert!(
        !info.text.contains(API_SECRET) && !info.text.contains("rtmps"),
        "no secrets: {}",
        info.text
    );
    let paths: Vec<String> = ch
        .stream
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        paths,
        [
            "POST /api/v2/users",
            "POST /api/v2/video/call/livestream/channel",
            "POST /api/v2/chat/channels/livestream/channel/query",
            "POST /api/v2/users",
            "POST /api/v2/video/call/livestream/channel",
            "POST /api/v2/chat/channels/livestream/channel/query",
        ]
    );
    assert_eq!(
        ch.stream.requests()[1].body["data"]["created_by_id"],
        "channel-owner"
    );
}

#[tokio::test]
async fn without_the_provider_configured_provisioning_names_what_is_missing() {
    let ch = Channel::with(&[
        ("KEEL_STREAM_API_KEY", String::new()),
        ("KEEL_STREAM_API_SECRET", String::new()),
    ])
    .await;
    ch.set_up().await;
    let r = ch.mutate("stream.provision", json!({})).await;
    assert_eq!(
        (r.status, r.code()),
        (412, "PRECONDITION_FAILED"),
        "{}",
        r.text
    );
    assert_eq!(r.body["error"]["code"], -32012);
    let m = r.body["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("KEEL_STREAM_API_KEY") && m.contains("KEEL_STREAM_API_SECRET"),
        "{m}"
    );
    // The rest of the channel keeps working.
    assert_eq!(ch.query("channel.getInfo", None).await.status, 200);
    assert_eq!(ch.query("stream.isLive", None).await.status, 200);
    let t = ch.query("stream.viewerToken", None).await;
    assert_eq!((t.status, t.code()), (412, "PRECONDITION_FAILED"));
}

#[tokio::test]
async fn a_failing_provider_is_a_bad_gateway_and_nothing_is_stored() {
    let ch = Channel::start().await;
    ch.set_up().await;
    ch.stream.fail_next(&[500; 12]);
    let r = ch.mutate("stream.provision", json!({})).await;
    assert_eq!((r.status, r.code()), (502, "BAD_GATEWAY"), "{}", r.text);
    assert_eq!(r.body["error"]["code"], -32603);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("provider")
    );
    assert_eq!(
        ch.query("channel.getInfo", None).await.data()["provisioned"],
        false
    );
    // The call is made at the provider, its chat fails: still nothing stored.
    ch.stream.fail_path("/chat/", 503, 12);
    let r = ch.mutate("stream.provision", json!({})).await;
    assert_eq!((r.status, r.code()), (502, "BAD_GATEWAY"), "{}", r.text);
    assert_eq!(
        ch.query("channel.getInfo", None).await.data()["provisioned"],
        false
    );
    let r = ch.query("stream.credentials", None).await;
    assert_eq!(r.code(), "PRECONDITION_FAILED");
}

#[tokio::test]
async fn the_credentials_are_the_ingest_url_and_the_broadcasters_token() {
    let ch = Channel::start().await;
    ch.set_up().await;
    let r = ch.query("stream.credentials", None).await;
    assert_eq!(
        (r.status, r.code()),
        (412, "PRECONDITION_FAILED"),
        "not provisioned yet"
    );
    let p = ch
        .mutate("stream.provision", json!({}))
        .await
        .data()
        .clone();
    let r = ch.query("stream.credentials", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.data()["rtmpsUrl"], p["rtmpsUrl"]);
    assert_eq!(
        claims(r.data()["streamKey"].as_str().unwrap())["user_id"],
        "channel-owner"
    );
}

#[tokio::test]
async fn going_live_makes_the_call_public_and_ending_stops_it_at_once() {
    let ch = Channel::start().await;
    ch.set_up().await;
    let r = ch.mutate("stream.goLive", json!({})).await;
    assert_eq!((r.status, r.code()), (412, "PRECONDITION_FAILED"));
    ch.mutate("stream.provision", json!({})).await;
    let r = ch.mutate("stream.goLive", json!({})).await;
    assert_eq!(r.data(), &json!({"ok": true}));
    assert!(ch.stream.is_live("livestream:channel"));
    let go_live = ch
        .stream
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/go_live"))
        .unwrap();
    assert_eq!(go_live.body["start_hls"], true);
    // The provider reports it live.
    assert_eq!(ch.event("call.live_started", json!({})).await.status, 200);
    ch.until_live(true).await;
    let r = ch.mutate("stream.end", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.data()["isLive"],
        false,
        "ended at once, before any webhook"
    );
    assert!(!ch.stream.is_live("livestream:channel"));
    assert_eq!(ch.is_live().await["isLive"], false);
}

#[tokio::test]
async fn a_viewer_token_lets_anyone_watch_this_call_only() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    ch.forget_cookie();
    let r = ch.query("stream.viewerToken", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let v = r.data();
    assert_eq!(v["apiKey"], API_KEY);
    assert_eq!(v["userId"], "!anon");
    assert_eq!(v["callCid"], "livestream:channel");
    assert_eq!(v["chatChannelCid"], "livestream:channel");
    assert_eq!(v["hlsPlaylistUrl"], Value::Null, "not live");
    let c = claims(v["token"].as_str().unwrap());
    assert_eq!(c["user_id"], "!anon");
    assert_eq!(c["role"], "viewer");
    assert_eq!(c["call_cids"], json!(["livestream:channel"]));
    assert!(c["exp"].as_i64().unwrap() > chrono::Utc::now().timestamp());
}

#[tokio::test]
async fn a_crowd_of_viewers_asks_the_provider_for_the_playlist_once_a_session() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    ch.mutate("stream.goLive", json!({})).await;
    ch.event("call.live_started", json!({})).await;
    ch.until_live(true).await;
    ch.forget_cookie();
    let gets = || {
        ch.stream
            .requests()
            .iter()
            .filter(|r| r.method == "GET" && r.path == "/api/v2/video/call/livestream/channel")
            .count()
    };
    let before = gets();
    let crowd = (0..40).map(|_| ch.query("stream.viewerToken", None));
    for r in futures::future::join_all(crowd).await {
        assert_eq!(r.status, 200, "{}", r.text);
        assert!(r.data()["hlsPlaylistUrl"].as_str().is_some(), "{}", r.text);
    }
    assert_eq!(gets() - before, 1, "one provider read for the whole crowd");
}

#[tokio::test]
async fn one_client_asking_for_viewer_tokens_over_and_over_is_limited() {
    let ch = Channel::with(&[("KEEL_CHANNEL_VIEWER_TOKENS_PER_MINUTE", "3".into())]).await;
    ch.provisioned().await;
    for _ in 0..3 {
        assert_eq!(ch.query("stream.viewerToken", None).await.status, 200);
    }
    let r = ch.query("stream.viewerToken", None).await;
    assert_eq!(
        (r.status, r.code()),
        (429, "TOO_MANY_REQUESTS"),
        "{}",
        r.text
    );
    assert!(r.headers.contains_key("retry-after"));
}

#[tokio::test]
async fn is_live_follows_the_provider_with_the_viewer_count() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    assert_eq!(
        ch.is_live().await,
        json!({"isLive": false, "liveStartedAt": null, "viewerCount": 0})
    );
    ch.event("call.live_started", json!({"call": {"cid": ch.cid(), "backstage": false, "session": {"participants_count_by_role": {"viewer": 3}, "anonymous_participant_count": 4}}})).await;
    let s = ch.until_live(true).await;
    assert_eq!(s["viewerCount"], 7);
    assert!(s["liveStartedAt"].is_string());
    ch.event("call.session_participant_count_updated", json!({"participants_count_by_role": {"viewer": 10, "host": 1}, "anonymous_participant_count": 2})).await;
    let s = keel_testkit::eventually_async(std::time::Duration::from_secs(5), || async {
        let s = ch.is_live().await;
        (s["viewerCount"] == 13).then_some(s)
    })
    .await;
    assert!(s.is_some(), "the count follows the provider's updates");
}

#[tokio::test]
async fn is_live_follows_the_database_whatever_redis_holds() {
    let ch = Channel::with(&keel_testkit::redis_env()).await;
    ch.provisioned().await;
    ch.event("call.live_started", json!({})).await;
    ch.until_live(true).await;
    // Another node ended the stream and could not tell Redis: the
    // database says offline, a cache still says live.
    let live = json!({"isLive": true, "liveStartedAt": "2026-01-01T00:00:00Z", "viewerCount": 3});
    let cache = &ch.app.platform().cache;
    cache
        .set(
            "channel:live",
            live.to_string().as_bytes(),
            std::time::Duration::from_secs(86_400),
        )
        .await
        .unwrap();
    ch.app
        .platform()
        .db
        .write()
        .execute_unprepared(
            "UPDATE channel_config SET live_started_at = NULL, live_session_id = NULL",
        )
        .await
        .unwrap();
    ch.until_live(false).await;
}
