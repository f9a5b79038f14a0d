//! The admin session cookie: `__Host-` and `Secure` over HTTPS (as a
//! trusted proxy says), plain over HTTP on a developer's machine; a
//! client's own `X-Forwarded-Proto` counts for nothing; answers that carry
//! the nonce or a new password are never stored.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{Resp, Svc, finish};

async fn login(svc: &Svc, proto: Option<&str>, password: &str) -> Resp {
    let mut req = svc
        .app
        .http
        .post(svc.url("/admin/login"))
        .json(&json!({"username": "boss", "password": password}));
    if let Some(p) = proto {
        req = req.header("x-forwarded-proto", p);
    }
    finish(req.send().await.unwrap()).await
}

async fn settings(svc: &Svc, proto: &str, cookie: &str, nonce: &str) -> u16 {
    svc.app
        .http
        .get(svc.url("/admin/settings"))
        .header("x-forwarded-proto", proto)
        .header("cookie", cookie)
        .header("x-svc-nonce", nonce)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn over_https_the_session_cookie_is_host_prefixed_and_secure() {
    let svc = Svc::with(&[("KEEL_TRUSTED_PROXIES", "127.0.0.1, ::1".into())]).await;
    let (login_pw, _) = svc.admin("boss").await;
    let r = login(&svc, Some("https"), &login_pw).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.headers["cache-control"], "no-store",
        "the nonce is a secret"
    );
    let set = r.headers["set-cookie"].to_str().unwrap().to_owned();
    assert!(set.starts_with("__Host-svc_session="), "{set}");
    for part in ["Path=/", "Secure", "HttpOnly", "SameSite=Strict"] {
        assert!(set.contains(part), "{part} in {set}");
    }
    assert!(!set.contains("Domain"), "{set}");
    let token = set
        .split(';')
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1
        .to_owned();
    let nonce = r.body["nonce"].as_str().unwrap().to_owned();
    let host = format!("__Host-svc_session={token}");
    assert_eq!(settings(&svc, "https", &host, &nonce).await, 200);
    // The same token under the plain name is not the session over HTTPS:
    // a cookie another host could have set.
    let plain = format!("svc_session={token}");
    assert_eq!(settings(&svc, "https", &plain, &nonce).await, 401);
    let out = svc
        .app
        .http
        .post(svc.url("/admin/logout"))
        .header("x-forwarded-proto", "https")
        .header("cookie", &host)
        .header("x-svc-nonce", &nonce)
        .send()
        .await
        .unwrap();
    let cleared = out.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cleared.starts_with("__Host-svc_session=;") && cleared.contains("Max-Age=0"),
        "{cleared}"
    );
}

#[tokio::test]
async fn a_clients_own_forwarded_proto_is_not_believed() {
    let svc = Svc::start().await;
    let (login_pw, _) = svc.admin("boss").await;
    let r = login(&svc, Some("https"), &login_pw).await;
    let set = r.headers["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        set.starts_with("svc_session=") && !set.contains("Secure"),
        "{set}"
    );
    let r = login(&svc, None, &login_pw).await;
    assert!(
        r.headers["set-cookie"]
            .to_str()
            .unwrap()
            .starts_with("svc_session=")
    );
}

#[tokio::test]
async fn a_new_application_password_is_never_stored_by_a_cache() {
    let svc = Svc::start().await;
    let (login_pw, pw) = svc.admin("boss").await;
    let r = login(&svc, None, &login_pw).await;
    let cookie = keel_testkit::session::cookie(&r.headers);
    let nonce = r.body["nonce"].as_str().unwrap().to_owned();
    let made = svc
        .app
        .http
        .post(svc.url("/admin/app-passwords"))
        .header("cookie", cookie)
        .header("x-svc-nonce", nonce)
        .json(&json!({"name": "deploy"}))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), 201);
    assert_eq!(made.headers()["cache-control"], "no-store");
    // And a listing, which holds no secret, is not marked so.
    let list = svc
        .admin_call(Method::GET, "/admin/app-passwords", ("boss", &pw), None)
        .await;
    assert_ne!(
        list.headers
            .get("cache-control")
            .map(|v| v.to_str().unwrap()),
        Some("no-store")
    );
}
