//! What an operator starts from (`deploy/observability`), read by the
//! tools that will read it: the alert rules pass `promtool check rules` and
//! their unit tests (`promtool test rules`); the dashboard is read through
//! Grafana's own types (every field one its schema knows) and each of its
//! queries parses as PromQL (promtool); and every metric the dashboard and
//! the rules name is one a running keel exports on `/metrics`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use keel_testkit::{FakeApns, FakeExpo, TestApp};
use serde_json::{Value, json};

use crate::deploy_files::{checker, once, root, run};
use crate::push_common::seed;

fn dir() -> PathBuf {
    root().join("deploy/observability")
}

fn promtool() -> Command {
    let p = keel_testkit::tools_dir().join("promtool/usr/bin/promtool");
    assert!(
        p.exists(),
        "{} is missing: scripts/test unpacks it",
        p.display()
    );
    Command::new(p)
}

/// Runs `cmd` and asserts it succeeded; what it printed.
fn ok(cmd: &mut Command) -> String {
    let (ok, text) = run(cmd);
    assert!(ok, "{cmd:?} failed:\n{text}");
    text
}

fn dashboard() -> Value {
    let text = std::fs::read_to_string(dir().join("keel-dashboard.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every query of the dashboard, with Grafana's variables given values.
fn dashboard_queries() -> Vec<String> {
    let d = dashboard();
    let mut out = Vec::new();
    for panel in d["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().into_iter().flatten() {
            let expr = t["expr"].as_str().unwrap();
            out.push(
                expr.replace("$__rate_interval", "5m")
                    .replace("$instance", ".*"),
            );
        }
    }
    assert!(out.len() >= 20, "{out:?}");
    out
}

/// The alert rules' expressions: the text after each `expr:` up to the
/// rule's next key (`for:` or `labels:`).
fn rule_exprs() -> Vec<String> {
    let text = std::fs::read_to_string(dir().join("keel-alerts.yml")).unwrap();
    let exprs: Vec<String> = text
        .lines()
        .skip_while(|l| !l.contains("groups:"))
        .map(str::to_owned)
        .collect::<Vec<_>>()
        .join("\n")
        .split("expr:")
        .skip(1)
        .map(|s| {
            s.lines()
                .take_while(|l| !l.contains("for:") && !l.contains("labels:"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    assert_eq!(exprs.len(), 14, "{exprs:?}");
    exprs
}

/// The `keel_*` metric names in PromQL text, a histogram's series named
/// by their family.
fn names_in(exprs: &[String]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for e in exprs {
        for (i, _) in e.match_indices("keel_") {
            let name: String = e[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .unwrap_or(&name);
            names.insert(family.to_owned());
        }
    }
    names
}

#[test]
fn the_alert_rules_are_valid_and_their_unit_tests_pass() {
    if !once() {
        return;
    }
    let checked = ok(promtool()
        .arg("check")
        .arg("rules")
        .arg(dir().join("keel-alerts.yml")));
    assert!(checked.contains("SUCCESS"), "{checked}");
    let tested = ok(promtool()
        .current_dir(dir())
        .arg("test")
        .arg("rules")
        .arg("keel-alerts.test.yml"));
    assert!(tested.contains("SUCCESS"), "{tested}");
}

#[test]
fn the_dashboard_is_one_grafanas_schema_reads_and_every_query_parses() {
    if !once() {
        return;
    }
    let script = root().join("crates/testkit/checkers/grafana_check.py");
    let said = ok(Command::new(checker("python"))
        .arg(script)
        .arg(dir().join("keel-dashboard.json")));
    println!("{said}");
    // Each query as a recording rule: promtool parses it with Prometheus's
    // own parser.
    let rules: Vec<Value> = dashboard_queries()
        .iter()
        .enumerate()
        .map(|(i, q)| json!({"record": format!("dashboard:query{i}"), "expr": q}))
        .collect();
    let file = tempfile::NamedTempFile::new().unwrap();
    let doc = json!({"groups": [{"name": "dashboard", "rules": rules}]});
    std::fs::write(file.path(), serde_json::to_string(&doc).unwrap()).unwrap();
    let checked = ok(promtool().arg("check").arg("rules").arg(file.path()));
    assert!(checked.contains("SUCCESS"), "{checked}");
}

/// svc sends a push to three devices (one ticket refused for bad
/// credentials, one receipt in error), accounts registers a user and
/// signs in (a password verified, a mail job run), and usage-alerts' push
/// of an alert is refused by APNs.
async fn busy_app() -> (TestApp, FakeExpo, FakeApns) {
    let expo = FakeExpo::start().await;
    let apns = FakeApns::start().await;
    let app = TestApp::builder()
        .env("KEEL_EXPO_URL", expo.url())
        .env("KEEL_EXPO_RECEIPT_DELAY_SECS", "0")
        .envs(apns.env())
        .spawn()
        .await;
    usage_alert_refused(&app, &apns).await;
    let password = seed(app.platform(), 3).await;
    expo.ticket_error("ExponentPushToken[crash00001]", "InvalidCredentials");
    expo.receipt_error("ExponentPushToken[crash00002]", "DeviceNotRegistered");
    let r = app
        .http
        .post(app.url(keel_svc::NAME, "/send"))
        .basic_auth("boss", Some(&password))
        .json(&json!({"title": "Hello", "body": "metrics"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202, "{}", r.text().await.unwrap());
    let r = app
        .http
        .post(app.url(keel_accounts::NAME, "/auth/register"))
        .form(&[
            ("username", "watcher"),
            ("email", "watcher@example.com"),
            ("password", "a-Long-password-4-keel"),
        ])
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let r = app
        .http
        .post(app.url(keel_accounts::NAME, "/auth/login"))
        .form(&[("login", "watcher"), ("password", "a-Long-password-4-keel")])
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    app.jobs_drained().await;
    (app, expo, apns)
}

/// usage-alerts crosses its default $5 threshold for a device whose push
/// APNs refuses for a bad provider token.
async fn usage_alert_refused(app: &TestApp, apns: &FakeApns) {
    let device = "a".repeat(64);
    apns.respond(&device, 403, "InvalidProviderToken");
    let url = |p: &str| app.url(keel_usage_alerts::NAME, p);
    let r = app
        .http
        .post(url("/register"))
        .bearer_auth("watcher")
        .json(&json!({"device_token": device, "platform": "ios", "sandbox": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let event = json!({
        "sessionId": "s1", "timestamp": "2026-11-22T10:00:00.000Z", "model": "claude",
        "inputTokens": 1, "outputTokens": 1, "cacheReadTokens": 0, "cacheWriteTokens": 0,
        "costUSD": 6.0,
    });
    let r = app
        .http
        .post(url("/event"))
        .bearer_auth("watcher")
        .json(&event)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
}

/// The metric families `/metrics` names (`# TYPE` lines).
fn exported(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn every_metric_the_dashboard_and_the_alerts_name_is_one_keel_exports() {
    let (app, _expo, _apns) = busy_app().await;
    let text = keel_testkit::eventually_async(Duration::from_secs(10), || async {
        let text = app.metrics().await;
        text.contains("keel_push_receipts_total").then_some(text)
    })
    .await
    .expect("the receipts are counted");
    let have = exported(&text);
    let mut wanted = names_in(&dashboard_queries());
    wanted.extend(names_in(&rule_exprs()));
    // Replication's (Litestream beside a keel process) are read off a
    // replicating keel's /metrics in replication.rs.
    wanted.retain(|name| !name.starts_with("keel_replica_"));
    let missing: Vec<_> = wanted.difference(&have).collect();
    assert!(
        missing.is_empty(),
        "named but not exported: {missing:?}\n{text}"
    );
    for line in [
        r#"keel_push_messages_total{status="error",error="InvalidCredentials"} 1"#,
        r#"keel_push_messages_total{status="sent",error=""} 2"#,
        r#"keel_push_receipts_total{status="error",error="DeviceNotRegistered"} 1"#,
        r#"keel_apns_responses_total{outcome="rejected",reason="InvalidProviderToken"} 1"#,
        "keel_ready 1",
        r#"keel_dependency_up{dependency="database"} 1"#,
        r#"keel_jobs_due{kind="svc.push.batch"} 0"#,
        r#"keel_jobs_oldest_due_age_seconds{kind="platform.mail"} 0"#,
    ] {
        assert!(text.contains(line), "{line} is not in\n{text}");
    }
}

#[tokio::test]
async fn a_job_waiting_past_its_time_shows_in_the_queue_gauges() {
    use keel_platform::jobs::entity;
    use keel_platform::sea_orm::{EntityTrait, Set};
    let app = TestApp::builder()
        .service(keel_accounts::NAME)
        .spawn()
        .await;
    // Straight into the queue, due a minute ago, of a kind no worker runs.
    let now = chrono::Utc::now();
    let job = entity::ActiveModel {
        kind: Set("test.waiting".to_owned()),
        payload: Set("{}".to_owned()),
        unique_key: Set(None),
        status: Set(entity::QUEUED.to_owned()),
        attempts: Set(0),
        max_attempts: Set(1),
        run_at: Set(now - chrono::Duration::seconds(60)),
        locked_until: Set(None),
        locked_by: Set(None),
        last_error: Set(None),
        created_at: Set(now),
        ..Default::default()
    };
    entity::Entity::insert(job)
        .exec_without_returning(app.platform().db.write())
        .await
        .unwrap();
    let text = app.metrics().await;
    let line = text
        .lines()
        .find(|l| l.starts_with(r#"keel_jobs_oldest_due_age_seconds{kind="test.waiting"}"#))
        .unwrap_or_else(|| panic!("no age for the waiting job in\n{text}"));
    let age: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((60.0..3600.0).contains(&age), "{line}");
    assert!(
        text.contains(r#"keel_jobs_due{kind="test.waiting"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"keel_jobs_queued{kind="test.waiting"} 1"#),
        "{text}"
    );
    let pools: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("keel_db_pool_"))
        .collect();
    assert!(pools.len() >= 6, "{pools:?}");
}
