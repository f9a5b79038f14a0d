//! The first run: `setup.status`, `setup.complete`.

use serde_json::json;

use crate::helpers::{Channel, EMAIL, ORIGIN, PASSWORD, Resp, SETUP_CODE, finish};

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
            json!({"code": SETUP_CODE, "email": "other@example.com", "password": PASSWORD, "title": "Mine"}),
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
    let body = |i: usize| json!({"code": SETUP_CODE, "email": format!("o{i}@example.com"), "password": PASSWORD, "title": format!("T{i}")});
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

async fn set_up_from(ch: &Channel, origin: Option<&str>, body: serde_json::Value) -> Resp {
    let mut req = ch.app.http.post(ch.url("/api/trpc/setup.complete"));
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    finish(req.json(&body).send().await.unwrap()).await
}

async fn still_unclaimed(ch: &Channel) {
    assert_eq!(
        ch.query("setup.status", None).await.data()["needsSetup"],
        true,
        "someone claimed the channel"
    );
}

#[tokio::test]
async fn a_common_owner_password_is_refused_naming_why() {
    let ch = Channel::start().await;
    for password in ["password1234", "1234567890", "qwertyuiopasdf"] {
        let body =
            json!({"code": SETUP_CODE, "email": EMAIL, "password": password, "title": "Mine"});
        let r = set_up_from(&ch, Some(ORIGIN), body).await;
        assert_eq!(
            (r.status, r.code()),
            (400, "BAD_REQUEST"),
            "{password}: {}",
            r.text
        );
        let message = r.body["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("input.password: is too easy to guess"),
            "{message}"
        );
    }
    still_unclaimed(&ch).await;
}

#[tokio::test]
async fn a_visitor_without_the_set_up_code_cannot_claim_a_fresh_channel() {
    let ch = Channel::start().await;
    let wrong =
        json!({"code": "NOT-THE-CODE", "email": EMAIL, "password": PASSWORD, "title": "Mine"});
    let r = set_up_from(&ch, Some(ORIGIN), wrong).await;
    assert_eq!((r.status, r.code()), (401, "UNAUTHORIZED"), "{}", r.text);
    assert!(r.text.contains("set-up code"), "{}", r.text);
    let missing = json!({"email": EMAIL, "password": PASSWORD, "title": "Mine"});
    let r = set_up_from(&ch, Some(ORIGIN), missing).await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"), "{}", r.text);
    assert!(r.text.contains("code"), "{}", r.text);
    still_unclaimed(&ch).await;
    // Codes, case, spaces and dashes aside, are compared whole.
    let close =
        json!({"code": " TEST-SETUP-CODE ", "email": EMAIL, "password": PASSWORD, "title": "Mine"});
    let r = set_up_from(&ch, Some(ORIGIN), close).await;
    assert_eq!(r.status, 200, "{}", r.text);
}

#[tokio::test]
async fn a_set_up_or_a_sign_in_from_another_site_is_forbidden() {
    let ch = Channel::start().await;
    let body = json!({"code": SETUP_CODE, "email": EMAIL, "password": PASSWORD, "title": "Mine"});
    let r = set_up_from(&ch, Some("https://evil.example"), body).await;
    assert_eq!((r.status, r.code()), (403, "FORBIDDEN"), "{}", r.text);
    still_unclaimed(&ch).await;
    ch.set_up().await;
    let r = finish(
        ch.app
            .http
            .post(ch.url("/api/auth/sign-in"))
            .header("origin", "https://evil.example")
            .json(&json!({"email": EMAIL, "password": PASSWORD}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((r.status, r.code()), (403, "FORBIDDEN"), "{}", r.text);
    assert!(r.headers.get("set-cookie").is_none());
}

#[tokio::test]
async fn guessing_the_set_up_code_is_rate_limited() {
    let ch = Channel::start().await;
    let wrong = json!({"code": "GUESS", "email": EMAIL, "password": PASSWORD, "title": "Mine"});
    let mut codes = Vec::new();
    for _ in 0..11 {
        codes.push(
            set_up_from(&ch, Some(ORIGIN), wrong.clone())
                .await
                .code()
                .to_owned(),
        );
    }
    assert_eq!(codes[..10], vec!["UNAUTHORIZED"; 10][..]);
    assert_eq!(codes[10], "TOO_MANY_REQUESTS");
}
