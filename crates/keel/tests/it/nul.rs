//! No service stores or looks up text holding the NUL character (U+0000),
//! which PostgreSQL's text cannot hold: a path, query string or body with
//! one is a 400 in the service's own shape, on either database, before
//! anything is read or written.

use keel_testkit::TestApp;
use serde_json::{Value, json};

/// Each service's error shape: where its message is.
fn message(service: &str, body: &Value) -> String {
    let at = match service {
        keel_usage_alerts::NAME => &body["error"],
        keel_channel::API => &body["error"]["message"],
        _ => &body["message"],
    };
    at.as_str().unwrap_or_default().to_owned()
}

async fn refused(app: &TestApp, service: &str, req: reqwest::RequestBuilder) {
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    assert_eq!(status, 400, "{service}: {body}");
    assert!(message(service, &body).contains("NUL"), "{service}: {body}");
    let _ = app;
}

#[tokio::test]
async fn a_nul_character_anywhere_in_a_request_is_a_400_in_the_services_shape() {
    let app = TestApp::spawn().await;
    for s in keel::services::http_names()
        .into_iter()
        .filter(|s| *s != keel_channel::WEB)
    {
        let path = if s == keel_svc::NAME {
            "/svc/v1/register/status"
        } else {
            "/healthz"
        };
        refused(
            &app,
            s,
            app.http.get(app.root(s, &format!("{path}?x=a%00b"))),
        )
        .await;
        refused(&app, s, app.http.get(app.root(s, "/no%00where"))).await;
    }
    let accounts = app.url(keel_accounts::NAME, "/auth/register");
    let nul = json!({"username": "ada\u{0}", "email": "ada@example.com", "password": "correct horse battery"});
    refused(
        &app,
        keel_accounts::NAME,
        app.http.post(&accounts).json(&nul),
    )
    .await;
    refused(
        &app,
        keel_accounts::NAME,
        app.http.post(&accounts).form(&[("username", "ada\u{0}")]),
    )
    .await;
    let mut event = json!({"sessionId": "s", "timestamp": "2026-11-22T10:00:00Z", "model": "m\u{0}",
        "inputTokens": 1, "outputTokens": 1, "cacheReadTokens": 0, "cacheWriteTokens": 0, "costUSD": 0.1});
    let usage = app.url(keel_usage_alerts::NAME, "/event");
    refused(
        &app,
        keel_usage_alerts::NAME,
        app.http.post(&usage).bearer_auth("dev").json(&event),
    )
    .await;
    event["model"] = json!({"nested": ["\u{0}"]});
    refused(
        &app,
        keel_usage_alerts::NAME,
        app.http.post(&usage).bearer_auth("dev").json(&event),
    )
    .await;
    let login = app.url(keel_svc::NAME, "/admin/login");
    refused(
        &app,
        keel_svc::NAME,
        app.http
            .post(&login)
            .json(&json!({"username": "\u{0}", "password": "x"})),
    )
    .await;
    let sign_in = app.url(keel_channel::API, "/api/trpc/setup.complete");
    refused(
        &app,
        keel_channel::API,
        app.http.post(&sign_in).json(&json!({"code": "\u{0}"})),
    )
    .await;
}
