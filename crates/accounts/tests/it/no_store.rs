//! Answers that carry a secret are never stored by a cache: tokens (a
//! registration, a sign-in, a refresh), a two-factor secret, backup codes
//! and a data export; an answer without one is not marked so.

use crate::helpers::{Api, Resp};

fn no_store(r: &Resp, what: &str) {
    assert_eq!(r.status, 200, "{what}: {}", r.text);
    assert_eq!(
        r.headers.get("cache-control").map(|v| v.to_str().unwrap()),
        Some("no-store"),
        "{what}"
    );
}

#[tokio::test]
async fn tokens_secrets_codes_and_exports_are_answered_no_store() {
    let api = Api::start().await;
    let r = api
        .post(
            "/auth/register",
            None,
            &[
                ("username", "ada"),
                ("email", "ada@example.com"),
                ("password", "correct horse battery"),
            ],
        )
        .await;
    no_store(&r, "register");
    let r = api.login("ada", "correct horse battery", None).await;
    no_store(&r, "login");
    let token = r.body["accessToken"].as_str().unwrap().to_owned();
    let refresh = r.body["refreshToken"].as_str().unwrap().to_owned();
    let r = api
        .post("/auth/refresh", None, &[("refreshToken", &refresh)])
        .await;
    no_store(&r, "refresh");
    let r = api.post("/account/two-factor", Some(&token), &[]).await;
    no_store(&r, "two-factor start");
    let r = api.get("/account/export", &token).await;
    no_store(&r, "export");
    let r = api.get("/account", &token).await;
    assert_eq!(r.status, 200);
    assert_ne!(
        r.headers.get("cache-control").map(|v| v.to_str().unwrap()),
        Some("no-store"),
        "GET /account is not a secret's answer"
    );
}
