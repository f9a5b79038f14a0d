//! Every door guarded the same way: each route that takes a password is a
//! door of the platform's guard, found from the services' own route
//! tables, and each door, knocked on too often, answers 429 with
//! `Retry-After` in its service's shape before anything is hashed.

use std::collections::BTreeSet;

use keel_platform::guard::Door;
use keel_testkit::TestApp;
use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};

/// Routes whose body holds a password that they set, not check: each is
/// limited otherwise (registrations per address; the set-up is the guard's
/// `setup` door for its code).
const SETS_A_PASSWORD: &[(&str, &str, &str)] = &[("accounts", "POST", "/auth/register")];

/// `(METHOD, path)` of every operation whose request body has a property
/// named like a password (`$ref`s followed).
fn password_operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    let Some(paths) = doc["paths"].as_object() else {
        return found;
    };
    for (path, ops) in paths {
        for (method, op) in ops.as_object().into_iter().flatten() {
            let contents = op["requestBody"]["content"].as_object();
            let takes = contents
                .into_iter()
                .flatten()
                .any(|(_, c)| has_password(doc, &c["schema"], 0));
            if takes {
                found.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    found
}

fn has_password(doc: &Value, schema: &Value, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.trim_start_matches("#/components/schemas/");
        return has_password(doc, &doc["components"]["schemas"][name], depth + 1);
    }
    let props = schema["properties"].as_object();
    let direct = props
        .into_iter()
        .flatten()
        .any(|(k, v)| k.to_lowercase().contains("password") || v["format"] == "password");
    let nested = ["allOf", "oneOf", "anyOf"].iter().any(|k| {
        schema[k]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| has_password(doc, s, depth + 1))
    });
    direct || nested
}

/// A service's base path (the part of its OpenAPI paths before a door's).
fn base_path(app: &TestApp, service: &str) -> String {
    let url = app.url(service, "");
    let root = app.root(service, "");
    url.trim_start_matches(&root).to_owned()
}

async fn openapi(app: &TestApp, service: &str) -> Value {
    let url = app.root(service, "/openapi.json");
    app.http
        .get(url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn every_route_that_takes_a_password_is_a_door_of_the_guard() {
    let app = TestApp::spawn().await;
    for service in keel::services::SERVICES {
        let doc = openapi(&app, service.name).await;
        let base = base_path(&app, service.name);
        let doors: BTreeSet<(String, String)> = service
            .doors
            .iter()
            .flat_map(|d| d.routes.iter())
            .map(|(m, p)| ((*m).to_owned(), format!("{base}{p}")))
            .collect();
        let documented: BTreeSet<(String, String)> = doc["paths"]
            .as_object()
            .into_iter()
            .flatten()
            .flat_map(|(p, ops)| {
                ops.as_object()
                    .into_iter()
                    .flatten()
                    .map(move |(m, _)| (m.to_uppercase(), p.clone()))
            })
            .collect();
        for door in &doors {
            assert!(
                documented.contains(door),
                "{}: the door {door:?} is no route of its table",
                service.name
            );
        }
        for op in password_operations(&doc) {
            let sets = SETS_A_PASSWORD.iter().any(|(s, m, p)| {
                *s == service.name && op == ((*m).to_owned(), format!("{base}{p}"))
            });
            assert!(
                doors.contains(&op) || sets,
                "{}: {op:?} takes a password but is no door of the guard",
                service.name
            );
        }
    }
}

/// The test's own view of an attempt at a door's route.
struct Attempts {
    app: TestApp,
    /// Bearer tokens of users made for the proof routes, by route.
    tokens: Vec<(String, String)>,
}

impl Attempts {
    /// A wrong attempt at `route` of `service` from `address`.
    fn attempt(
        &self,
        service: &str,
        (method, route): (&str, &str),
        address: &str,
    ) -> RequestBuilder {
        let url = self
            .app
            .url(service, route)
            .replace("{passkeyId}", "0123456789abcdef01234567");
        let req = self
            .app
            .http
            .request(Method::from_bytes(method.as_bytes()).unwrap(), url)
            .header("x-forwarded-for", address);
        match (service, route) {
            ("accounts", "/auth/login") => {
                req.form(&[("login", "someone"), ("password", "not the password")])
            }
            ("accounts", "/auth/passkey/options" | "/auth/passkey") => req.json(&json!({})),
            ("accounts", _) => {
                let token = self
                    .tokens
                    .iter()
                    .find(|(r, _)| r == route)
                    .map(|(_, t)| t.clone())
                    .unwrap_or_else(|| panic!("no user made for {route}"));
                req.bearer_auth(token).form(&[
                    ("password", "not the password"),
                    ("oldPassword", "not the password"),
                    ("newPassword", "a new long passphrase"),
                ])
            }
            ("svc", "/admin/login") => {
                req.json(&json!({"username": "someone", "password": "not the password"}))
            }
            ("channel-api", "/api/auth/sign-in") => {
                req.json(&json!({"email": "owner@example.com", "password": "not the password"}))
            }
            ("channel-api", "/api/trpc/setup.complete") => req.json(&json!({
                "code": "GUESS", "email": "owner@example.com",
                "password": "a long owner password", "title": "Mine"
            })),
            ("console", "/console/v1/session") => req.json(&json!({
                "name": "someone", "password": "not the password", "code": "123456"
            })),
            other => panic!("no attempt is written for the door route {other:?}: add one here"),
        }
    }

    async fn hashes(&self) -> f64 {
        let m = self.app.metrics().await;
        m.lines()
            .find(|l| l.starts_with("keel_password_verifications_total"))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    }
}

/// Whether `body` is `service`'s answer to a door's limit.
fn throttled_in_shape(service: &str, body: &Value) -> bool {
    match service {
        "accounts" => body["code"] == "TOO_MANY_REQUESTS" && body["message"].is_string(),
        "svc" => body["code"] == "rate_limited" && body["data"]["status"] == 429,
        "channel-api" => {
            body["error"]["data"]["code"] == "TOO_MANY_REQUESTS"
                && body["error"]["data"]["httpStatus"] == 429
        }
        "console" => body["code"] == "throttled" && body["retry_after"].is_u64(),
        other => panic!("no error shape known for {other}"),
    }
}

async fn register(app: &TestApp, name: &str, address: &str) -> String {
    let r: Value = app
        .http
        .post(app.url("accounts", "/auth/register"))
        .header("x-forwarded-for", address)
        .form(&[
            ("username", name),
            ("email", &format!("{name}@example.com")),
            ("password", "correct horse battery"),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    r["accessToken"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned()
}

#[tokio::test]
async fn every_door_answers_429_with_retry_after_in_its_shape_before_hashing() {
    let app = TestApp::builder()
        .env("KEEL_TRUSTED_PROXIES", "127.0.0.1, ::1")
        .spawn()
        .await;
    let doors: Vec<(&str, &Door)> = keel::services::SERVICES
        .iter()
        .flat_map(|s| s.doors.iter().map(move |d| (s.name, d)))
        .filter(|(_, d)| d.per_address > 0 || d.per_name > 0)
        .collect();
    let mut tokens = Vec::new();
    for (n, (method, route)) in doors
        .iter()
        .filter(|(s, _)| *s == "accounts")
        .flat_map(|(_, d)| d.routes.iter())
        .filter(|(_, r)| r.starts_with("/account"))
        .enumerate()
    {
        let _ = method;
        let token = register(&app, &format!("proof{n}"), &format!("10.9.{n}.1")).await;
        tokens.push(((*route).to_owned(), token));
    }
    let attempts = Attempts { app, tokens };
    let mut address = 0;
    for (service, door) in doors {
        let limit = [door.per_address, door.per_name]
            .into_iter()
            .filter(|n| *n > 0)
            .min()
            .unwrap_or(0);
        for route in door.routes {
            address += 1;
            let from = format!("10.1.{address}.1");
            // The limit is a sliding minute: an attempt that straddles the
            // minute's turn may let one more in, never one fewer.
            let mut throttled_at = None;
            for n in 1..=limit + 3 {
                let before = attempts.hashes().await;
                let r = attempts
                    .attempt(service, *route, &from)
                    .send()
                    .await
                    .unwrap();
                let status = r.status();
                let retry = r.headers().get("retry-after").cloned();
                let body: Value = r.json().await.unwrap_or(Value::Null);
                if !(status == 429 && throttled_in_shape(service, &body)) {
                    continue;
                }
                assert!(
                    n > limit,
                    "{service} {route:?}: attempt {n} of {limit} was throttled"
                );
                let retry: u64 = retry.unwrap().to_str().unwrap().parse().unwrap();
                assert!((1..=120).contains(&retry), "{retry}");
                assert_eq!(
                    attempts.hashes().await,
                    before,
                    "{service} {route:?} hashed when throttled"
                );
                throttled_at = Some(n);
                break;
            }
            assert!(
                throttled_at.is_some(),
                "{service} {route:?} was never throttled"
            );
        }
        let label = format!("door=\"{}\",outcome=\"throttled\"", door.label());
        let metrics = attempts.app.metrics().await;
        assert!(metrics.contains(&label), "{label} is not on /metrics");
    }
}

#[tokio::test]
async fn a_refused_or_throttled_sign_in_is_logged_at_warn_with_the_names_pseudonym_only() {
    use keel_testkit::db::TestDb;
    use keel_testkit::process::{KeelProcess, command};
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let env = [
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_SVC_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_LOG_FORMAT", "json".to_owned()),
    ];
    let keel = KeelProcess::serve(command(crate::KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let name = "victim.name@example.com";
    let http = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..6 {
        let r = http
            .post(format!("{}/admin/login", keel.url("svc")))
            .json(&json!({"username": name, "password": "guess"}))
            .send()
            .await
            .unwrap();
        statuses.push(r.status().as_u16());
    }
    assert_eq!(statuses, [401, 401, 401, 401, 401, 429]);
    let log = keel_testkit::eventually(std::time::Duration::from_secs(10), || {
        let log = keel.stderr();
        log.contains("sign-in throttled").then_some(log)
    })
    .await
    .expect("a throttled line");
    let warns: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["fields"]["door"] == "svc:admin-login")
        .collect();
    assert_eq!(warns.len(), 6, "{log}");
    for w in &warns {
        assert_eq!(w["level"], "WARN");
        let pseudonym = w["fields"]["name"].as_str().unwrap();
        assert_eq!(pseudonym.len(), 32, "{w}");
        assert_eq!(w["fields"]["address"], "127.0.0.1");
    }
    assert!(
        !log.to_lowercase().contains("victim"),
        "the name reached the log"
    );
    let metrics = http
        .get(keel.url("metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for (outcome, n) in [("refused", 5), ("throttled", 1)] {
        let line = format!(
            "keel_sign_in_attempts_total{{door=\"svc:admin-login\",outcome=\"{outcome}\"}} {n}"
        );
        assert!(metrics.contains(&line), "{line} not in\n{metrics}");
    }
}
