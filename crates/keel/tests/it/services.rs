//! Every service listener, in-process: health, OpenAPI and its error shape.

use keel_testkit::TestApp;
use serde_json::Value;

#[tokio::test]
async fn every_service_answers_healthz_readyz_and_openapi() {
    let app = TestApp::spawn().await;
    for s in keel::services::http_names() {
        let health = app.http.get(app.root(s, "/healthz")).send().await.unwrap();
        assert_eq!(health.status(), 200, "{s} /healthz");
        let ready = app.http.get(app.root(s, "/readyz")).send().await.unwrap();
        assert_eq!(ready.status(), 200, "{s} /readyz");
        let doc: Value = app
            .http
            .get(app.root(s, "/openapi.json"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(doc["info"]["title"], format!("keel {s}"));
        assert!(
            doc["paths"]["/healthz"].is_object(),
            "{s} documents /healthz"
        );
    }
}

async fn not_found(app: &TestApp, s: &str) -> (u16, String, String) {
    let resp = app
        .http
        .get(app.root(s, "/no/such/path"))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let ctype = resp.headers()["content-type"].to_str().unwrap().to_owned();
    (status, ctype, resp.text().await.unwrap())
}

#[tokio::test]
async fn each_service_answers_an_unknown_path_in_its_own_error_shape() {
    let app = TestApp::spawn().await;

    let (status, _, body) = not_found(&app, keel_accounts::NAME).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status, 404);
    assert_eq!(v["code"], "NOT_FOUND");
    assert!(v["message"].is_string());

    let (status, _, body) = not_found(&app, keel_usage_alerts::NAME).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status, 404);
    assert!(v["error"].is_string());
    assert_eq!(v.as_object().unwrap().len(), 1);

    let (status, _, body) = not_found(&app, keel_svc::NAME).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status, 404);
    assert_eq!(v["code"], "rest_no_route");
    assert_eq!(v["data"]["status"], 404);

    let (status, _, body) = not_found(&app, keel_channel::API).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status, 404);
    assert_eq!(v["error"]["code"], -32004);
    assert_eq!(v["error"]["data"]["code"], "NOT_FOUND");
    assert_eq!(v["error"]["data"]["httpStatus"], 404);

    let (status, ctype, body) = not_found(&app, keel_channel::WEB).await;
    assert_eq!(status, 404);
    assert!(ctype.starts_with("text/html"));
    assert!(body.contains("404"));
}

#[tokio::test]
async fn metrics_are_served_on_their_own_listener_not_with_the_apis() {
    let app = TestApp::spawn().await;
    app.http
        .get(app.root(keel_accounts::NAME, "/healthz"))
        .send()
        .await
        .unwrap();
    let text = app.metrics().await;
    assert!(text.contains(r#"service="accounts""#), "{text}");
    let on_api = app
        .http
        .get(app.root(keel_accounts::NAME, "/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(on_api.status(), 404);
}

#[tokio::test]
async fn the_svc_namespace_follows_the_configured_rest_root() {
    let app = TestApp::builder()
        .service(keel_svc::NAME)
        .env("KEEL_SVC_REST_ROOT", "/wp-json")
        .spawn()
        .await;
    assert!(app.url(keel_svc::NAME, "").ends_with("/wp-json/svc/v1"));
}

#[tokio::test]
async fn a_restart_on_the_same_database_finds_nothing_to_migrate() {
    let mut app = TestApp::builder()
        .service(keel_accounts::NAME)
        .spawn()
        .await;
    app.restart().await;
    let ready = app
        .http
        .get(app.root(keel_accounts::NAME, "/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
}

#[tokio::test]
async fn every_operation_behind_a_token_documents_its_401() {
    let app = TestApp::spawn().await;
    for s in [keel_accounts::NAME, keel_usage_alerts::NAME] {
        let doc: Value = app
            .http
            .get(app.root(s, "/openapi.json"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let mut secured = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                if op["security"].as_array().is_some_and(|s| !s.is_empty()) {
                    secured += 1;
                    assert!(
                        op["responses"]["401"].is_object(),
                        "{s} {method} {path} documents 401"
                    );
                }
            }
        }
        assert!(secured > 5, "{s}: {secured} secured operations");
    }
}

#[tokio::test]
async fn a_stop_drains_as_a_sigterm_does_then_the_process_ends() {
    // The launch the binary runs, asked to stop as its signal handler asks.
    let app = TestApp::builder()
        .service(keel_usage_alerts::NAME)
        .env("KEEL_SHUTDOWN_DRAIN_SECS", "30")
        .spawn()
        .await;
    let url = app.url(keel_usage_alerts::NAME, "/readyz");
    let running = app.running_for_tests();
    running.stop();
    let draining = keel_testkit::eventually_async(std::time::Duration::from_secs(10), || async {
        let r = app.http.get(&url).send().await.ok()?;
        (r.status() == 503).then_some(r.text().await.ok()?)
    })
    .await;
    assert!(
        draining.is_some_and(|b| b.contains("draining")),
        "/readyz says draining"
    );
    let status = app
        .http
        .get(app.url(keel_usage_alerts::NAME, "/status"))
        .send()
        .await;
    assert_eq!(
        status.map(|r| r.status().as_u16()).ok(),
        Some(200),
        "still serving"
    );
    // A second ask skips the rest of the drain.
    running.stop();
    let stopped = keel_testkit::eventually_async(std::time::Duration::from_secs(10), || async {
        app.http.get(&url).send().await.is_err().then_some(())
    })
    .await;
    assert!(stopped.is_some(), "the listener closed");
}
