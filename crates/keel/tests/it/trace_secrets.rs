//! No token leaves keel in a trace: requests to every route with a token
//! in its path, found from the services' own route tables, are exported
//! with the route template only, and a server span carries exactly its
//! documented attributes; no span, span event or log line holds a token.

use std::collections::BTreeSet;

use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use serde_json::Value;

use crate::KEEL;
use crate::traces::{Receiver, stop};

/// What a server span carries, and nothing else.
const SERVER_ATTRIBUTES: &[&str] = &[
    "http.request.method",
    "http.response.status_code",
    "http.route",
    "keel.request_id",
    "keel.service",
];

/// `(METHOD, path)` of every operation with a path parameter named like a
/// token.
fn token_routes(doc: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (path, ops) in doc["paths"].as_object().into_iter().flatten() {
        let tokened = path
            .split('/')
            .any(|seg| seg.starts_with('{') && seg.to_lowercase().contains("token"));
        if !tokened {
            continue;
        }
        for (method, _) in ops.as_object().into_iter().flatten() {
            found.push((method.to_uppercase(), path.clone()));
        }
    }
    found
}

#[tokio::test]
async fn no_token_in_a_path_reaches_an_exported_span_and_a_server_span_has_its_attributes_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let receiver = Receiver::start();
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_LOG_FORMAT", "json".to_owned()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url.clone()),
        // Every line a request writes, down to the HTTP layer's own.
        ("RUST_LOG", "debug".to_owned()),
    ]);
    for l in keel::services::http().map(|s| s.listener) {
        env.push((l.var, "127.0.0.1:0".to_owned()));
    }
    let node = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve"])).await;
    let http = reqwest::Client::new();
    let mut tokens = Vec::new();
    let mut routes = BTreeSet::new();
    for service in keel::services::http_names() {
        let base = node.url(service).to_owned();
        let root = base
            .find("://")
            .and_then(|i| {
                base[i + 3..]
                    .find('/')
                    .map(|j| base[..i + 3 + j].to_owned())
            })
            .unwrap_or_else(|| base.clone());
        let doc: Value = http
            .get(format!("{root}/openapi.json"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for (method, path) in token_routes(&doc) {
            let token = format!("s3cret{}c0ffee{}", tokens.len(), "x".repeat(20));
            let url = path
                .split('/')
                .map(|seg| {
                    if seg.starts_with('{') {
                        token.as_str()
                    } else {
                        seg
                    }
                })
                .collect::<Vec<_>>()
                .join("/");
            let r = http
                .request(method.parse().unwrap(), format!("{root}{url}"))
                .header("content-type", "application/x-www-form-urlencoded")
                .send()
                .await
                .unwrap();
            assert!(r.status().as_u16() < 500, "{method} {path}: {}", r.status());
            routes.insert((service, method, path));
            tokens.push(token);
        }
    }
    assert!(
        routes.len() >= 4,
        "the verification, unsubscribe and email-change links: {routes:?}"
    );
    let logs = stop(node).await;
    let spans = receiver.spans().await;
    let all = serde_json::to_string(&spans).unwrap();
    for token in &tokens {
        assert!(!all.contains(token.as_str()), "{token} left keel in a span");
        assert!(!logs.contains(token.as_str()), "{token} reached the log");
    }
    let servers: Vec<&Value> = spans
        .iter()
        .filter(|s| s["kind"] == "SPAN_KIND_SERVER")
        .collect();
    for (service, method, path) in &routes {
        let name = format!("{method} {path}");
        let span = servers.iter().find(|s| s["name"] == name.as_str());
        let span = span.unwrap_or_else(|| panic!("no server span {name} ({service})"));
        let keys: Vec<&str> = span["attributes"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, SERVER_ATTRIBUTES, "{span:#}");
        assert_eq!(span["attributes"]["http.route"], path.as_str());
    }
}

#[tokio::test]
async fn otel_variables_come_from_files_and_keel_toml_like_keels_own() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let receiver = Receiver::start();
    // A vendor's key in a file, the service's name in keel.toml.
    let headers = dir.path().join("otlp-headers");
    std::fs::write(&headers, "x-vendor-key=k3y-from-a-file\n").unwrap();
    std::fs::write(
        dir.path().join("keel.toml"),
        "OTEL_SERVICE_NAME = \"keel-from-toml\"\n",
    )
    .unwrap();
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_SVC_ADDR", "127.0.0.1:0".to_owned()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url.clone()),
        (
            "OTEL_EXPORTER_OTLP_HEADERS_FILE",
            headers.display().to_string(),
        ),
    ]);
    let node = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let r = reqwest::get(format!("{}/sends", node.url("svc")))
        .await
        .unwrap();
    assert!(r.status().is_client_error());
    stop(node).await;
    let seen = receiver.requests_seen().await;
    let sent: Vec<&Value> = seen["headers"].as_array().unwrap().iter().collect();
    assert!(!sent.is_empty(), "nothing exported");
    assert!(
        sent.iter().all(|h| h["x-vendor-key"] == "k3y-from-a-file"),
        "{sent:?}"
    );
    let spans = receiver.spans().await;
    assert!(
        spans
            .iter()
            .all(|s| s["resource"]["service.name"] == "keel-from-toml"),
        "{spans:#?}"
    );
}
