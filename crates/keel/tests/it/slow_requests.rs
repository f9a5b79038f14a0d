//! `KEEL_SLOW_REQUEST_MS`: a request slower than it is logged with where
//! its time went; unset, nothing is timed and nothing is logged.

use std::time::Duration;

use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use serde_json::Value;

use crate::KEEL;

async fn accounts(dir: &std::path::Path, db: &TestDb, slow_ms: Option<&str>) -> KeelProcess {
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_LOG_FORMAT", "json".to_owned()),
    ]);
    if let Some(ms) = slow_ms {
        env.push(("KEEL_SLOW_REQUEST_MS", ms.to_owned()));
    }
    KeelProcess::serve(command(KEEL, dir, &env, &["serve", "accounts"])).await
}

/// Registers a user (a password hashed and rows written: never under a
/// millisecond) and reads the account back with its token.
async fn register_and_read(base: &str) -> String {
    let r: Value = reqwest::Client::new()
        .post(format!("{base}/auth/register"))
        .form(&[
            ("username", "slowpoke"),
            ("email", "slowpoke@example.com"),
            ("password", "correct horse battery"),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = r["accessToken"].as_str().expect("a token").to_owned();
    let r = reqwest::Client::new()
        .get(format!("{base}/account"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    token
}

/// The "slow request" lines keel logged, as JSON.
fn slow_lines(log: &str) -> Vec<Value> {
    log.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["fields"]["message"] == "slow request")
        .map(|v| v["fields"].clone())
        .collect()
}

#[tokio::test]
async fn a_request_slower_than_the_threshold_is_logged_with_its_route_and_phases() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let keel = accounts(dir.path(), &db, Some("1")).await;
    register_and_read(keel.url("accounts")).await;
    let line = keel_testkit::eventually(Duration::from_secs(10), || {
        let log = format!("{}{}", keel.stdout(), keel.stderr());
        slow_lines(&log)
            .into_iter()
            .find(|l| l["route"] == "/auth/register")
    })
    .await
    .unwrap_or_else(|| panic!("no slow request line:\n{}", keel.stderr()));
    assert_eq!(line["method"], "POST");
    assert_eq!(line["status"], 200, "{line}");
    assert!(
        !line["request_id"].as_str().unwrap_or("").is_empty(),
        "{line}"
    );
    let ms = |k: &str| line[k].as_f64().unwrap_or_else(|| panic!("{k} in {line}"));
    assert!(ms("total_ms") >= 1.0, "{line}");
    assert!(ms("run_ms") > 0.0, "the password hash runs: {line}");
    assert!(ms("db_ms") > 0.0, "{line}");
    assert!(
        line["db_statements"].as_u64().unwrap_or(0) >= 1,
        "rows written: {line}"
    );
    for k in [
        "ready_ms",
        "wait_ms",
        "write_ms",
        "auth_ms",
        "cache_ms",
        "outbound_ms",
    ] {
        assert!(ms(k) >= 0.0, "{k}: {line}");
    }
    assert!(
        ms("run_ms") + ms("ready_ms") + ms("wait_ms") <= ms("total_ms") + 0.02,
        "{line}"
    );
}

#[tokio::test]
async fn without_the_threshold_no_request_is_timed_or_logged() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let mut keel = accounts(dir.path(), &db, None).await;
    register_and_read(keel.url("accounts")).await;
    keel.kill().await;
    let log = format!("{}{}", keel.stdout(), keel.stderr());
    assert!(slow_lines(&log).is_empty(), "{log}");
    assert!(!log.contains("runtime lag"), "{log}");
}
