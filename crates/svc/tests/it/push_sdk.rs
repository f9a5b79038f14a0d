//! Expo's server SDK (expo-server-sdk 6.1.0, pinned in
//! crates/keel/tests/provider-sdks) is the reference for what svc sends
//! Expo: the SDK sends the same notification to the same devices against a
//! second fake, and the two fakes' records must agree.

use std::time::Duration;

use keel_testkit::FakeExpo;
use serde_json::{Value, json};

use crate::helpers::Svc;
use crate::push_kit::{device, token, until};

const DEVICES: usize = 150;
const WITHIN: Duration = Duration::from_secs(20);

/// (recipients, gzipped) of each send request, in order of size.
fn chunks(expo: &FakeExpo) -> Vec<(usize, bool)> {
    let mut c: Vec<_> = expo
        .requests()
        .iter()
        .map(|r| (r.recipients, r.gzipped))
        .collect();
    c.sort_unstable();
    c
}

#[tokio::test]
async fn svc_sends_and_asks_for_receipts_as_expos_server_sdk_does() {
    let svc = Svc::with(&[("KEEL_EXPO_ACCESS_TOKEN", "expo-secret".into())]).await;
    let admin = svc.push_admin().await;
    svc.seed((0..DEVICES).map(device)).await;
    let id = svc
        .sent(
            &admin,
            json!({"title": "Hello", "body": "World", "data": {"screen": "news"}}),
        )
        .await;
    svc.wait_sent(&admin, &id, WITHIN).await;
    until(WITHIN, "receipts are in", || async {
        svc.send_view(&admin, &id).await.body["progress"]["receipts_ok"] == DEVICES
    })
    .await;
    let keel = svc.expo.requests();

    let reference = FakeExpo::start().await;
    let mut message = keel[0].first.clone();
    if let Some(m) = message.as_object_mut() {
        m.remove("to");
    }
    let tokens: Vec<String> = (0..DEVICES).map(token).collect();
    let dir = keel_testkit::node::package("crates/keel/tests/provider-sdks");
    let out = keel_testkit::node::run_json(
        &dir,
        "expo.mjs",
        &[
            &reference.url(),
            "expo-secret",
            &message.to_string(),
            &Value::from(tokens).to_string(),
        ],
    )
    .await;
    assert_eq!(out["receipts"], DEVICES, "the SDK reads the fake: {out}");
    let sdk = reference.requests();

    assert_eq!(chunks(&svc.expo), chunks(&reference), "chunks and gzip");
    let h = &keel[0].headers;
    assert_eq!(h["accept-encoding"], "gzip, deflate");
    assert_eq!(h["authorization"], "Bearer expo-secret");
    assert_eq!(h["content-type"], "application/json");
    for (k, s) in keel.iter().zip(&sdk) {
        assert_eq!(k.headers, s.headers, "send headers");
        let (mut k, mut s) = (k.first.clone(), s.first.clone());
        for m in [&mut k, &mut s] {
            if let Some(m) = m.as_object_mut() {
                m.remove("to");
            }
        }
        assert_eq!(k, s, "a message");
    }
    // keel asks for the receipts of each second's batches together (the
    // delay is 0 here), so a send whose two batches straddle a second
    // boundary asks twice: how many requests is timing, what each carries
    // is not.
    let (keel_headers, sdk_headers) = (svc.expo.receipt_headers(), reference.receipt_headers());
    assert!(!keel_headers.is_empty() && !sdk_headers.is_empty());
    for h in &keel_headers {
        assert_eq!(h, &sdk_headers[0], "receipts headers");
    }
    let asked = |requests: Vec<usize>| requests.iter().sum::<usize>();
    assert_eq!(
        asked(svc.expo.receipt_requests()),
        asked(reference.receipt_requests()),
        "every ticket's receipt asked for once"
    );
}
