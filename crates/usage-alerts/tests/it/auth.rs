use keel_testkit::FakeJwks;
use reqwest::Method;
use serde_json::json;

use crate::helpers::Api;

const AUD: &str = "com.example.usage";

async fn production(jwks: &FakeJwks) -> Api {
    Api::with(&[
        ("KEEL_USAGE_ALERTS_ENV", "production".to_owned()),
        ("KEEL_APPLE_JWKS_URL", jwks.url()),
        (
            "KEEL_APPLE_AUDIENCES",
            format!("{AUD},com.example.usage.watchkitapp"),
        ),
    ])
    .await
}

fn claims(sub: &str, exp_in: i64) -> serde_json::Value {
    let now = chrono::Utc::now().timestamp();
    json!({"iss": "https://appleid.apple.com", "aud": AUD, "sub": sub, "iat": now, "exp": now + exp_in, "email_verified": "true"})
}

async fn status_with(api: &Api, token: &str) -> (u16, String) {
    let r = api.get("/device", token).await;
    (r.status, r.text)
}

#[tokio::test]
async fn status_needs_no_token_and_reports_version_and_environment() {
    let api = Api::start().await;
    let r = api.call(Method::GET, "/status", None, None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status"], "ok");
    assert_eq!(r.body["environment"], "development");
    let version = r.body["version"].as_str().unwrap();
    assert_eq!(version.split('.').count(), 3, "semantic version: {version}");
    let jwks = FakeJwks::start().await;
    let prod = production(&jwks).await;
    assert_eq!(
        prod.call(Method::GET, "/status", None, None).await.body["environment"],
        "production"
    );
}

#[tokio::test]
async fn every_other_endpoint_is_401_without_a_token() {
    let api = Api::start().await;
    for (method, path) in [
        (Method::POST, "/register"),
        (Method::DELETE, "/register"),
        (Method::DELETE, "/device/abc"),
        (Method::POST, "/event"),
        (Method::GET, "/preferences"),
        (Method::POST, "/preferences"),
        (Method::GET, "/history"),
        (Method::GET, "/device"),
        (Method::DELETE, "/account"),
    ] {
        let r = api.call(method.clone(), path, None, Some(json!({}))).await;
        assert_eq!(r.status, 401, "{method} {path}");
        assert_eq!(r.body, json!({"error": "Unauthorized"}));
    }
}

#[tokio::test]
async fn development_maps_each_token_to_the_same_synthetic_user() {
    let api = Api::start().await;
    api.register("alice-token", &crate::helpers::device(1), "ios", false)
        .await;
    let a = api.get("/device", "alice-token").await;
    let uid = a.body["devices"][0]["userId"].as_str().unwrap().to_owned();
    assert!(uid.starts_with("dev-") && !uid.contains("alice"));
    assert_eq!(
        api.get("/device", "alice-token").await.body["devices"][0]["userId"],
        uid.as_str()
    );
    assert_eq!(
        api.get("/device", "bob-token").await.body["devices"],
        json!([])
    );
}

#[tokio::test]
async fn production_accepts_a_valid_apple_token_and_uses_its_subject() {
    let jwks = FakeJwks::start().await;
    let api = production(&jwks).await;
    let token = jwks.sign("k1", &claims("001234.abcdef.0999", 600));
    api.register(&token, &crate::helpers::device(1), "ios", false)
        .await;
    let r = api.get("/device", &token).await;
    assert_eq!(r.body["devices"][0]["userId"], "001234.abcdef.0999");
    let mut watch = claims("001234.abcdef.0999", 600);
    watch["aud"] = json!("com.example.usage.watchkitapp");
    assert_eq!(
        status_with(&api, &jwks.sign("k1", &watch)).await.0,
        200,
        "any configured audience"
    );
}

#[tokio::test]
async fn production_refuses_expired_foreign_and_forged_tokens() {
    let jwks = FakeJwks::start().await;
    let api = production(&jwks).await;
    let mut wrong_aud = claims("u", 600);
    wrong_aud["aud"] = json!("com.other.app");
    let mut wrong_iss = claims("u", 600);
    wrong_iss["iss"] = json!("https://evil.example");
    let cases = [
        ("expired", jwks.sign("k1", &claims("u", -600))),
        ("wrong audience", jwks.sign("k1", &wrong_aud)),
        ("wrong issuer", jwks.sign("k1", &wrong_iss)),
        ("alg none", jwks.sign_none("k1", &claims("u", 600))),
        (
            "HS256 with the public key",
            jwks.sign_hs256_with_public_key("k1", &claims("u", 600)),
        ),
        ("unpublished key", jwks.sign("k3", &claims("u", 600))),
        ("garbage", "not-a-token".to_owned()),
    ];
    for (what, token) in cases {
        let (status, text) = status_with(&api, &token).await;
        assert_eq!(status, 401, "{what}: {text}");
        assert_eq!(text, r#"{"error":"Unauthorized"}"#);
    }
}

#[tokio::test]
async fn an_unknown_kid_makes_keel_refetch_the_keys() {
    let jwks = FakeJwks::start().await;
    let api = production(&jwks).await;
    assert_eq!(
        status_with(&api, &jwks.sign("k1", &claims("u", 600)))
            .await
            .0,
        200
    );
    let before = jwks.fetches();
    jwks.publish(&["k1", "k2"]);
    assert_eq!(
        status_with(&api, &jwks.sign("k2", &claims("u", 600)))
            .await
            .0,
        200
    );
    assert_eq!(jwks.fetches(), before + 1);
}

#[tokio::test]
async fn production_without_audiences_does_not_start() {
    let src = keel_platform::config::Source::from_pairs([("KEEL_USAGE_ALERTS_ENV", "production")]);
    let err = keel_usage_alerts::Config::from_source(&src).unwrap_err();
    assert_eq!(err.var, "KEEL_APPLE_AUDIENCES");
}

#[tokio::test]
async fn while_apples_keys_cannot_be_fetched_a_request_is_503_not_401() {
    let api = Api::with(&[
        ("KEEL_USAGE_ALERTS_ENV", "production".to_owned()),
        // Nothing listens there.
        ("KEEL_APPLE_JWKS_URL", "http://127.0.0.1:9/keys".to_owned()),
        ("KEEL_APPLE_AUDIENCES", AUD.to_owned()),
    ])
    .await;
    let jwks = FakeJwks::start().await;
    let r = api
        .get(
            "/device",
            &jwks.sign("k1", &claims("001234.abcdef.0999", 600)),
        )
        .await;
    assert_eq!(r.status, 503, "{}", r.text);
    assert!(
        r.body["error"].as_str().unwrap().contains("unavailable"),
        "{}",
        r.text
    );
}
