//! The document says what the server enforces: schemathesis, driven by
//! `/openapi.json` alone, finds no request the server answers otherwise
//! than documented, signed in as a real user.

use keel_testkit::Schemathesis;

use crate::helpers::Api;

/// The operations that end the caller's own session: run apart, with a
/// user of their own, so the main run keeps its session to the end.
const ENDING_SESSIONS: [&str; 3] = ["logout", "revoke_all_sessions", "revoke_session"];

fn run(api: &Api, token: &str) -> Schemathesis {
    Schemathesis::new(api.url("/openapi.json"), api.url("")).bearer("bearer", token)
}

#[tokio::test]
async fn schemathesis_finds_nothing_the_document_does_not_say() {
    // Passkeys on (and apps for the association files), so their
    // operations are driven too.
    let fingerprint = vec!["AB"; 32].join(":");
    let android = format!("com.example.app={fingerprint}");
    let api = Api::with(&[
        ("KEEL_ACCOUNTS_WEBAUTHN_RP_ID", "localhost"),
        ("KEEL_ACCOUNTS_WEBAUTHN_ORIGINS", "http://localhost:5173"),
        ("KEEL_ACCOUNTS_APPLE_APP_IDS", "ABCDE12345.com.example.app"),
        ("KEEL_ACCOUNTS_ANDROID_APPS", &android),
    ])
    .await;
    let user = api.register("schemathesis").await;
    // Now: the main run's registrations exhaust the limit.
    let leaving = api.register("leaving").await;
    ENDING_SESSIONS
        .iter()
        .fold(run(&api, &user.token), |r, op| {
            r.arg("--exclude-operation-id").arg(*op)
        })
        .passes()
        .await;
    ENDING_SESSIONS
        .iter()
        .fold(run(&api, &leaving.token), |r, op| {
            r.arg("--include-operation-id").arg(*op)
        })
        .passes()
        .await;
}
