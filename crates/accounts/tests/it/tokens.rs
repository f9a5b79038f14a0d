use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;

use crate::helpers::{Api, JWT_SECRET, User};

fn claims_of(user: &User) -> serde_json::Value {
    let payload = user.token.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

fn sign(claims: &serde_json::Value, secret: &[u8]) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret),
    )
    .unwrap()
}

async fn assert_401(api: &Api, token: &str) {
    let r = api.get("/account", token).await;
    assert_eq!((r.status, r.code()), (401, "UNAUTHORIZED"), "{}", r.text);
    assert!(r.body["message"].is_string());
}

#[tokio::test]
async fn a_request_without_a_bearer_token_is_401() {
    let api = Api::start().await;
    let r = api.send(reqwest::Method::GET, "/account", None, None).await;
    assert_eq!((r.status, r.code()), (401, "UNAUTHORIZED"));
    let r = api
        .app
        .http
        .get(api.url("/goals/weekly"))
        .header("authorization", "Basic YTpi")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn an_expired_access_token_is_401() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let mut c = claims_of(&user);
    let now = chrono::Utc::now().timestamp();
    c["iat"] = json!(now - 3600);
    c["exp"] = json!(now - 60);
    assert_401(&api, &sign(&c, JWT_SECRET.as_bytes())).await;
}

#[tokio::test]
async fn access_tokens_expire_after_their_lifetime() {
    let api = Api::with(&[("KEEL_ACCOUNTS_ACCESS_TTL_SECS", "1")]).await;
    let user = api.register("ada").await;
    api.me(&user.token).await;
    let c = claims_of(&user);
    assert_eq!(c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap(), 1);
}

#[tokio::test]
async fn a_token_with_a_forged_signature_is_401() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let c = claims_of(&user);
    assert_401(&api, &sign(&c, b"another-secret-another-secret-another")).await;
    // A valid signature over other claims, pasted onto these claims.
    let mut parts: Vec<&str> = user.token.split('.').collect();
    let other = sign(
        &json!({"sub": "x", "sid": "y", "exp": 9_999_999_999i64, "typ": "access"}),
        JWT_SECRET.as_bytes(),
    );
    parts[2] = other.split('.').nth(2).unwrap();
    assert_401(&api, &parts.join(".")).await;
}

#[tokio::test]
async fn an_alg_none_token_is_401() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let header = URL_SAFE_NO_PAD.encode(json!({"alg": "none", "typ": "JWT"}).to_string());
    let body = URL_SAFE_NO_PAD.encode(claims_of(&user).to_string());
    assert_401(&api, &format!("{header}.{body}.")).await;
    assert_401(&api, "not.a.jwt").await;
}

#[tokio::test]
async fn a_token_naming_another_users_session_is_401() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let bob = api.register("bob").await;
    let mut c = claims_of(&ada);
    c["sid"] = claims_of(&bob)["sid"].clone();
    assert_401(&api, &sign(&c, JWT_SECRET.as_bytes())).await;
}

#[tokio::test]
async fn a_revoked_sessions_token_stops_working_on_the_next_request() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let second = api.login("ada", &user.password, None).await;
    let other_token = second.body["accessToken"].as_str().unwrap().to_owned();
    let sid = claims_of(&user)["sid"].as_str().unwrap().to_owned();
    let r = api
        .delete(&format!("/account/sessions/{sid}"), &other_token)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_401(&api, &user.token).await;
    api.me(&other_token).await;
}

#[tokio::test]
async fn a_banned_users_requests_are_403_account_banned() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    api.sql(&format!(
        "UPDATE accounts_users SET is_banned = TRUE WHERE id = '{}'",
        user.id
    ))
    .await;
    let r = api.get("/account", &user.token).await;
    assert_eq!((r.status, r.code()), (403, "ACCOUNT_BANNED"));
    let r = api.login("ada", &user.password, None).await;
    assert_eq!((r.status, r.code()), (403, "ACCOUNT_BANNED"));
    let r = api
        .post("/auth/refresh", None, &[("refreshToken", &user.refresh)])
        .await;
    assert_eq!((r.status, r.code()), (403, "ACCOUNT_BANNED"));
}

#[tokio::test]
async fn a_change_made_outside_keel_is_seen_within_the_session_cache_time() {
    let api = Api::with(&[("KEEL_ACCOUNTS_SESSION_CACHE_SECS", "1")]).await;
    let user = api.register("ada").await;
    api.me(&user.token).await;
    api.sql(&format!(
        "UPDATE accounts_users SET is_banned = TRUE WHERE id = '{}'",
        user.id
    ))
    .await;
    let seen = keel_testkit::eventually_async(std::time::Duration::from_secs(5), || async {
        let r = api.get("/account", &user.token).await;
        (r.status == 403).then_some(r)
    })
    .await
    .expect("the ban is seen once the cached session expires");
    assert_eq!(seen.code(), "ACCOUNT_BANNED");
}

#[tokio::test]
async fn with_the_session_cache_on_revocations_are_still_immediate() {
    let api = Api::with(&[("KEEL_ACCOUNTS_SESSION_CACHE_SECS", "60")]).await;
    let user = api.register("ada").await;
    api.me(&user.token).await;
    api.me(&user.token).await;
    let r = api.post("/auth/logout", Some(&user.token), &[]).await;
    assert_eq!(r.status, 200);
    assert_401(&api, &user.token).await;
    let second = api.login("ada", &user.password, None).await;
    let token = second.body["accessToken"].as_str().unwrap().to_owned();
    api.me(&token).await;
    let r = api
        .put(
            "/account/change-username",
            &token,
            &[("username", "lovelace")],
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        api.me(&token).await["username"],
        "lovelace",
        "changes show at once"
    );
    api.delete("/account/sessions", &token).await;
    assert_401(&api, &token).await;
}
