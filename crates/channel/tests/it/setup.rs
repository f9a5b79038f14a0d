//! The first run: `setup.status`, `setup.complete`.

use serde_json::json;

use crate::helpers::{Channel, EMAIL, PASSWORD};

#[tokio::test]
async fn set_up_creates_the_owner_names_the_channel_and_signs_in_once() {
    let ch = Channel::start().await;
    let r = ch.query("setup.status", None).await;
    assert_eq!(
        r.data(),
        &json!({"needsSetup": true, "provider": {"configured": true, "missing": []}})
    );
    let r = ch.set_up().await;
    assert_eq!(r.data(), &json!({"signedIn": true}));
    let cookie = r.headers["set-cookie"].to_str().unwrap().to_owned();
    for part in [
        "channel_session=",
        "HttpOnly",
        "SameSite=Lax",
        "Path=/",
        "Max-Age=",
    ] {
        assert!(cookie.contains(part), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "http public URL: {cookie}");
    assert_eq!(
        ch.query("setup.status", None).await.data()["needsSetup"],
        false
    );
    let info = ch.query("channel.getInfo", None).await;
    assert_eq!(info.data()["title"], "Ada's channel");
    assert_eq!(info.data()["description"], "Building things");
    let session = crate::helpers::finish(
        ch.app
            .http
            .get(ch.url("/api/auth/session"))
            .header("cookie", cookie.split(';').next().unwrap())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(session.body["owner"]["email"], EMAIL);

    let again = ch
        .mutate(
            "setup.complete",
            json!({"email": "other@example.com", "password": PASSWORD, "title": "Mine"}),
        )
        .await;
    assert_eq!(
        (again.status, again.code()),
        (409, "CONFLICT"),
        "{}",
        again.text
    );
    assert_eq!(
        ch.query("channel.getInfo", None).await.data()["title"],
        "Ada's channel"
    );
}

#[tokio::test]
async fn set_up_tells_which_provider_variables_are_missing() {
    let ch = Channel::with(&[("KEEL_STREAM_API_SECRET", String::new())]).await;
    let r = ch.query("setup.status", None).await;
    assert_eq!(
        r.data()["provider"],
        json!({"configured": false, "missing": ["KEEL_STREAM_API_SECRET"]})
    );
}

#[tokio::test]
async fn concurrent_set_ups_create_one_owner() {
    let ch = Channel::start().await;
    let body = |i: usize| json!({"email": format!("o{i}@example.com"), "password": PASSWORD, "title": format!("T{i}")});
    let all = futures::future::join_all((0..5).map(|i| ch.mutate("setup.complete", body(i)))).await;
    let ok = all.iter().filter(|r| r.status == 200).count();
    let conflict = all.iter().filter(|r| r.code() == "CONFLICT").count();
    assert_eq!(
        (ok, conflict),
        (1, 4),
        "{:?}",
        all.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
}
