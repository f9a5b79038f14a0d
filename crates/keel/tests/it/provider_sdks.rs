//! The providers' own SDKs (npm, pinned in tests/provider-sdks) as the
//! reference for what keel sends them: each SDK makes the calls keel makes
//! against keel's fake of its provider, the fake records both, and the
//! requests must match (method, path, query, auth, body). Where the SDK
//! checks something keel produces (a webhook signature), the SDK's verdict
//! is what keel's must be.

use keel_testkit::getstream::{API_KEY, API_SECRET, Delivery, Recorded};
use keel_testkit::{FakeStream, TestApp};
use serde_json::{Value, json};

/// Runs `node <script> <args>` in the SDK package; its JSON output.
pub async fn node(script: &str, args: &[&str]) -> Value {
    let dir = keel_testkit::node::package("crates/keel/tests/provider-sdks");
    keel_testkit::node::run_json(&dir, script, args).await
}

/// What a request is, for comparing: method, path, query keys and the
/// api_key, the auth, the body.
fn shape(r: &Recorded) -> Value {
    json!({
        "method": r.method,
        "path": r.path,
        "query": r.query.keys().collect::<Vec<_>>(),
        "api_key": r.query.get("api_key"),
        "auth_type": r.auth_type,
        "server_token": r.server_token,
        "body": r.body,
    })
}

#[tokio::test]
async fn keels_getstream_calls_are_the_server_sdks_and_its_webhooks_verify_alike() {
    // The SDK against one fake, keel against a fresh one.
    let reference_fake = FakeStream::start().await;
    let stream = FakeStream::start().await;
    let event = serde_json::to_string(&FakeStream::event(
        "call.live_started",
        "livestream:channel",
        json!({}),
    ))
    .unwrap();
    let signature = FakeStream::signature(event.as_bytes(), API_SECRET);
    let sdk = node(
        "getstream.mjs",
        &[
            &reference_fake.url(),
            API_KEY,
            API_SECRET,
            &event,
            &signature,
        ],
    )
    .await;
    assert_eq!(
        sdk["signatureValid"], true,
        "the SDK verifies the fake's signature"
    );
    let reference: Vec<Value> = reference_fake.requests().iter().map(shape).collect();

    let app = TestApp::builder()
        .service(keel_channel::API)
        .env("KEEL_CHANNEL_SETUP_CODE", "sdk")
        .envs(stream.env())
        .spawn()
        .await;
    let api = app.url(keel_channel::API, "");
    let http = reqwest::Client::new();
    let r = http
        .post(format!("{api}/api/trpc/setup.complete"))
        .json(&json!({"code": "sdk", "email": "o@example.com", "password": "correct horse battery", "title": "T"}))
        .send()
        .await
        .unwrap();
    let cookie = keel_testkit::session::cookie(r.headers());
    for name in ["stream.provision", "stream.goLive", "stream.end"] {
        let r = http
            .post(format!("{api}/api/trpc/{name}"))
            .header("cookie", &cookie)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{name}: {}", r.text().await.unwrap());
    }
    let keel: Vec<Value> = stream.requests().iter().map(shape).collect();
    // The stream key: the claims the SDK's permanent user token has.
    let creds: Value = http
        .get(format!("{api}/api/trpc/stream.credentials"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let claims = |t: &str| -> Value {
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        v.required_spec_claims.clear();
        let key = jsonwebtoken::DecodingKey::from_secret(API_SECRET.as_bytes());
        let c = jsonwebtoken::decode::<Value>(t, &key, &v).unwrap().claims;
        let mut keys: Vec<_> = c.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        json!({"user_id": c["user_id"], "claims": keys})
    };
    assert_eq!(
        claims(creds["result"]["data"]["streamKey"].as_str().unwrap()),
        claims(sdk["streamKey"].as_str().unwrap())
    );
    println!("the SDK's requests: {reference:#?}\nkeel's requests: {keel:#?}");
    for k in &keel {
        assert!(
            reference.contains(k),
            "keel sent a request the SDK does not send so: {k:#}"
        );
    }

    // keel accepts what the SDK accepts, and refuses a tampered body.
    let hook = format!("{api}/api/webhooks/stream");
    let delivered = stream
        .deliver_raw(&hook, event.clone().into_bytes(), Delivery::default())
        .await;
    assert_eq!(delivered.status(), 200);
    let tampered = event.replace("live_started", "live_startet");
    let sdk = node(
        "getstream.mjs",
        &[
            &FakeStream::start().await.url(),
            API_KEY,
            API_SECRET,
            &tampered,
            &signature,
        ],
    )
    .await;
    assert_eq!(sdk["signatureValid"], false);
    let r = http
        .post(&hook)
        .header("content-type", "application/json")
        .header("x-api-key", API_KEY)
        .header("x-signature", &signature)
        .body(tampered)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "keel refuses what the SDK refuses");
}
