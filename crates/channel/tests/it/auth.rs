//! The owner's session: sign-in, sign-out, the session, rate limits and
//! cross-site protection.

use keel_platform::sea_orm::EntityTrait;
use keel_platform::sea_orm::sea_query::Expr;
use serde_json::json;

use crate::helpers::{Channel, EMAIL, ORIGIN, PASSWORD, Resp, SETUP_CODE, finish};

async fn sign_in(ch: &Channel, email: &str, password: &str) -> Resp {
    ch.sign_in(email, password).await
}

async fn session(ch: &Channel, cookie: Option<&str>) -> serde_json::Value {
    let mut req = ch.app.http.get(ch.url("/api/auth/session"));
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    finish(req.send().await.unwrap()).await.body
}

#[tokio::test]
async fn a_wrong_email_and_a_wrong_password_answer_the_same() {
    let ch = Channel::start().await;
    ch.set_up().await;
    ch.forget_cookie();
    let a = sign_in(&ch, "nobody@example.com", PASSWORD).await;
    let b = sign_in(&ch, EMAIL, "wrong password!").await;
    assert_eq!((a.status, a.code()), (401, "UNAUTHORIZED"));
    assert_eq!(a.body, b.body);
    assert!(a.headers.get("set-cookie").is_none());
}

#[tokio::test]
async fn sign_out_ends_the_session_on_the_server_too() {
    let ch = Channel::start().await;
    ch.set_up().await;
    ch.forget_cookie();
    let r = sign_in(&ch, " Owner@Example.com ", PASSWORD).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["owner"]["email"], EMAIL);
    let cookie = keel_testkit::session::cookie(&r.headers);
    assert_eq!(session(&ch, Some(&cookie)).await["owner"]["email"], EMAIL);
    assert_eq!(ch.query("panels.list", None).await.status, 200);
    let out = finish(
        ch.app
            .http
            .post(ch.url("/api/auth/sign-out"))
            .header("origin", ORIGIN)
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(out.status, 200, "{}", out.text);
    assert!(
        out.headers["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    // The old cookie, replayed, is worth nothing now.
    assert_eq!(session(&ch, Some(&cookie)).await, json!({"owner": null}));
    let r = ch.query("panels.list", None).await;
    assert_eq!((r.status, r.code()), (401, "UNAUTHORIZED"));
}

#[tokio::test]
async fn signing_out_without_a_session_succeeds_but_not_from_another_site() {
    let ch = Channel::start().await;
    ch.set_up().await;
    let sign_out = |origin: &'static str, cookie: Option<&'static str>| {
        let mut req = ch
            .app
            .http
            .post(ch.url("/api/auth/sign-out"))
            .header("origin", origin);
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        async move { finish(req.send().await.unwrap()).await }
    };
    for cookie in [None, Some("channel_session=not-a-session")] {
        let r = sign_out(ORIGIN, cookie).await;
        assert_eq!(
            (r.status, &r.body),
            (200, &json!({"success": true})),
            "{cookie:?}"
        );
        assert!(
            r.headers["set-cookie"]
                .to_str()
                .unwrap()
                .contains("Max-Age=0")
        );
    }
    let r = sign_out("https://evil.example.com", None).await;
    assert_eq!((r.status, r.code()), (403, "FORBIDDEN"), "{}", r.text);
}

#[tokio::test]
async fn an_expired_session_is_not_one() {
    let ch = Channel::start().await;
    ch.set_up().await;
    use keel_channel::entity::auth_session;
    auth_session::Entity::update_many()
        .col_expr(
            auth_session::Column::ExpiresAt,
            Expr::value(chrono::Utc::now() - chrono::Duration::seconds(1)),
        )
        .exec(ch.app.platform().db.write())
        .await
        .unwrap();
    let r = ch.query("panels.list", None).await;
    assert_eq!((r.status, r.code()), (401, "UNAUTHORIZED"));
}

#[tokio::test]
async fn sign_in_attempts_are_limited_per_email() {
    let ch = Channel::start().await;
    ch.set_up().await;
    let mut codes = Vec::new();
    for _ in 0..6 {
        codes.push(sign_in(&ch, EMAIL, "wrong password!").await.status);
    }
    assert_eq!(codes, [401, 401, 401, 401, 401, 429]);
    let r = sign_in(&ch, EMAIL, PASSWORD).await;
    assert_eq!((r.status, r.code()), (429, "TOO_MANY_REQUESTS"));
    assert!(r.headers.contains_key("retry-after"));
}

#[tokio::test]
async fn procedures_of_the_owner_need_a_session() {
    let ch = Channel::start().await;
    for name in ["panels.list", "stream.credentials", "analytics.viewers"] {
        let r = ch.query(name, None).await;
        assert_eq!((r.status, r.code()), (401, "UNAUTHORIZED"), "{name}");
    }
    for name in [
        "stream.provision",
        "stream.goLive",
        "stream.end",
        "channel.update",
        "panels.create",
    ] {
        let r = ch.mutate(name, json!({"title": "x"})).await;
        assert_eq!((r.status, r.code()), (401, "UNAUTHORIZED"), "{name}");
    }
}

#[tokio::test]
async fn a_change_from_another_site_is_refused() {
    let ch = Channel::start().await;
    ch.set_up().await;
    let cookie = {
        let r = sign_in(&ch, EMAIL, PASSWORD).await;
        keel_testkit::session::cookie(&r.headers)
    };
    let post = |headers: &[(&str, &str)]| {
        let mut req = ch
            .app
            .http
            .post(ch.url("/api/trpc/channel.update"))
            .header("cookie", &cookie)
            .json(&json!({"title": "Hacked"}));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send()
    };
    let r = finish(post(&[("origin", "https://evil.example")]).await.unwrap()).await;
    assert_eq!((r.status, r.code()), (403, "FORBIDDEN"), "{}", r.text);
    let r = finish(post(&[("sec-fetch-site", "cross-site")]).await.unwrap()).await;
    assert_eq!((r.status, r.code()), (403, "FORBIDDEN"));
    assert_eq!(
        ch.query("channel.getInfo", None).await.data()["title"],
        "Ada's channel"
    );
    let r = finish(post(&[("origin", ORIGIN)]).await.unwrap()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = finish(post(&[("sec-fetch-site", "same-origin")]).await.unwrap()).await;
    assert_eq!(r.status, 200);
    let r = finish(post(&[]).await.unwrap()).await;
    assert_eq!(r.status, 200, "not a browser: no Origin, no Sec-Fetch-Site");
}

#[tokio::test]
async fn over_https_the_cookie_is_secure_and_shared_with_the_configured_domain() {
    let ch = Channel::with(&[
        ("KEEL_CHANNEL_PUBLIC_URL", "https://live.example.com".into()),
        ("KEEL_CHANNEL_COOKIE_DOMAIN", "example.com".into()),
        (
            "KEEL_CHANNEL_ALLOWED_ORIGINS",
            "https://www.example.com".into(),
        ),
    ])
    .await;
    let r = finish(
        ch.app
            .http
            .post(ch.url("/api/trpc/setup.complete"))
            .header("origin", "https://www.example.com")
            .json(&json!({"code": SETUP_CODE, "email": EMAIL, "password": PASSWORD, "title": "T"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let cookie = r.headers["set-cookie"].to_str().unwrap();
    assert!(
        cookie.contains("; Secure") && cookie.contains("; Domain=example.com"),
        "{cookie}"
    );
}
