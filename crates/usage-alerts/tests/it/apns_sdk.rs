//! node-apn (@parse/node-apn 8.1.0, the APNs client of Parse Server, pinned
//! in crates/keel/tests/provider-sdks) is the reference for what
//! usage-alerts sends APNs: it sends keel's notification to the fake, and
//! the two requests must agree.

use std::collections::BTreeMap;
use std::time::Duration;

use keel_testkit::apns::{ApnsRequest, KEY_ID, TEAM_ID};
use keel_testkit::{FakeApns, eventually};
use serde_json::{Value, json};

use crate::helpers::{Api, device};

async fn pushes(apns: &FakeApns, n: usize) -> Vec<ApnsRequest> {
    eventually(Duration::from_secs(10), || {
        let r = apns.requests();
        (r.len() >= n).then_some(r)
    })
    .await
    .unwrap_or_else(|| panic!("expected {n} pushes, got {:?}", apns.requests()))
}

/// The apns-* headers.
fn apns_headers(r: &ApnsRequest) -> BTreeMap<String, String> {
    r.headers
        .iter()
        .filter(|(k, _)| k.starts_with("apns-"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The provider token's header and the names of its claims.
fn provider_token_shape(r: &ApnsRequest) -> Value {
    let header = jsonwebtoken::decode_header(&r.provider_token).unwrap();
    let claims: Value = jsonwebtoken::dangerous::insecure_decode(&r.provider_token)
        .unwrap()
        .claims;
    let mut names: Vec<_> = claims.as_object().unwrap().keys().cloned().collect();
    names.sort();
    json!({"alg": format!("{:?}", header.alg), "kid": header.kid, "claims": names, "iss": claims["iss"]})
}

/// The JSON with every number as a float (JavaScript writes 6.0 as 6).
fn numbers_as_f64(v: &Value) -> Value {
    match v {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(a) => a.iter().map(numbers_as_f64).collect(),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| (k.clone(), numbers_as_f64(v)))
            .collect(),
        other => other.clone(),
    }
}

#[tokio::test]
async fn an_alert_is_sent_as_node_apn_sends_it() {
    let apns = FakeApns::start().await;
    let api = Api::with(&apns.env()).await;
    api.register("alice", &device(1), "ios", false).await;
    api.event("alice", "s1", 6.0).await;
    let keel = pushes(&apns, 1).await.remove(0);

    let dir = keel_testkit::node::package("crates/keel/tests/provider-sdks");
    let out = keel_testkit::node::run_json(
        &dir,
        "apns.mjs",
        &[
            "127.0.0.1",
            &apns.production.port().to_string(),
            &apns.ca_path().display().to_string(),
            &apns.key_path().display().to_string(),
            KEY_ID,
            TEAM_ID,
            &device(1),
            &serde_json::to_string(&apns_headers(&keel)).unwrap(),
            &keel.body.to_string(),
        ],
    )
    .await;
    assert_eq!(out["sent"], 1, "the fake accepts node-apn's push: {out}");
    let sdk = pushes(&apns, 2).await.remove(1);

    assert!(keel.http2 && sdk.http2, "HTTP/2");
    assert_eq!(
        (keel.sandbox, &keel.device_token),
        (sdk.sandbox, &sdk.device_token)
    );
    assert_eq!(apns_headers(&keel), apns_headers(&sdk));
    assert_eq!(numbers_as_f64(&keel.body), numbers_as_f64(&sdk.body));
    for r in [&keel, &sdk] {
        assert!(r.headers["authorization"].starts_with("bearer "));
    }
    assert_eq!(provider_token_shape(&keel), provider_token_shape(&sdk));
}
