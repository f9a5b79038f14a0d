//! The document says what the server enforces: schemathesis, driven by
//! `/openapi.json` alone, finds no request the server answers otherwise
//! than documented, with a real Sign in with Apple token (production mode).

use keel_testkit::{FakeJwks, Schemathesis};
use serde_json::json;

use crate::helpers::Api;

#[tokio::test]
async fn schemathesis_finds_nothing_the_document_does_not_say() {
    let jwks = FakeJwks::start().await;
    let api = Api::with(&[
        ("KEEL_USAGE_ALERTS_ENV", "production".to_owned()),
        ("KEEL_APPLE_JWKS_URL", jwks.url()),
        ("KEEL_APPLE_AUDIENCES", "com.example.usage".to_owned()),
    ])
    .await;
    let now = chrono::Utc::now().timestamp();
    let token = jwks.sign(
        "k1",
        &json!({"iss": "https://appleid.apple.com", "aud": "com.example.usage",
            "sub": "001234.schemathesis.0001", "iat": now, "exp": now + 3600}),
    );
    Schemathesis::new(api.url("/openapi.json"), api.url(""))
        .bearer("identity", token)
        .passes()
        .await;
}
