//! What the replication tests share: Litestream and moto from the pinned
//! tools, keel's environment with a replica, events written and read back.

use std::collections::HashSet;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use keel_testkit::process::{KeelProcess, command};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub const SYNC: Duration = Duration::from_secs(1);
/// What an upload of one second's log may take on a loaded test machine,
/// beyond the sync interval: a write older than both at the loss must be
/// in the replica.
pub const UPLOAD: Duration = Duration::from_secs(4);
pub const USER: &str = "replicated-user";

pub fn bin(name: &str) -> String {
    keel_testkit::tools_dir()
        .join("replication/bin")
        .join(name)
        .display()
        .to_string()
}

/// moto's S3 server on a port of its choosing, with the bucket made.
pub async fn s3() -> (Child, String) {
    keel_testkit::init();
    let mut child = Command::new(bin("moto_server"))
        .args(["-H", "127.0.0.1", "-p", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("moto_server (scripts/test installs it)");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut endpoint = None;
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(at) = line.split("Running on ").nth(1) {
            endpoint = Some(at.trim().to_owned());
            break;
        }
    }
    let endpoint = endpoint.expect("moto said where it listens");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let r = reqwest::Client::new()
        .put(format!("{endpoint}/keel-replica"))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "bucket: {}", r.status());
    (child, endpoint)
}

pub fn env(dir: &Path, replica: &str) -> Vec<(&'static str, String)> {
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("KEEL_USAGE_ALERTS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_REPLICA_URL", replica.to_owned()),
        ("KEEL_REPLICA_SYNC_MS", SYNC.as_millis().to_string()),
        ("KEEL_LITESTREAM_BIN", bin("litestream")),
        ("AWS_ACCESS_KEY_ID", "test".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "test".to_owned()),
    ]);
    env
}

/// Every event's `sessionId` the user has, through GET /history.
pub async fn history(base: &str) -> HashSet<String> {
    history_of(base, USER).await
}

/// Every event's `sessionId` `user` has, through GET /history.
pub async fn history_of(base: &str, user: &str) -> HashSet<String> {
    let http = reqwest::Client::new();
    let mut all = HashSet::new();
    for offset in (0..).step_by(500) {
        let page: Value = http
            .get(format!("{base}/history?limit=500&offset={offset}"))
            .bearer_auth(user)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let events = page["events"].as_array().cloned().unwrap_or_default();
        all.extend(
            events
                .iter()
                .filter_map(|e| e["sessionId"].as_str().map(str::to_owned)),
        );
        if events.len() < 500 {
            return all;
        }
    }
    all
}

/// Writes `sessions` one after another, each acknowledged.
pub async fn write(base: &str, sessions: impl IntoIterator<Item = String>) {
    let http = reqwest::Client::new();
    for session in sessions {
        let r = http
            .post(format!("{base}/event"))
            .bearer_auth(USER)
            .json(&event(&session))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
}

/// How many files the replica holds (`None` when it cannot be listed).
pub fn ltx_files(replica: &str) -> Option<usize> {
    let out = std::process::Command::new(bin("litestream"))
        .args(["ltx", "-json", "-level", "0", replica])
        .output()
        .ok()?;
    let files: Value = serde_json::from_slice(&out.stdout).ok()?;
    files.as_array().map(Vec::len)
}

/// An event of the user's, named `session`.
pub fn event(session: &str) -> Value {
    json!({"sessionId": session, "timestamp": "2026-11-29T10:00:00Z",
        "model": "m", "inputTokens": 1, "outputTokens": 1, "cacheReadTokens": 0,
        "cacheWriteTokens": 0, "costUSD": 0.0001})
}

/// A new account `name` (`name@example.com`): its access token.
pub async fn register(base: &str, name: &str) -> String {
    let r: Value = reqwest::Client::new()
        .post(format!("{base}/auth/register"))
        .json(&json!({"username": name, "email": format!("{name}@example.com"), "password": "long enough, really"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    r["accessToken"].as_str().expect("registered").to_owned()
}

/// keel serving accounts and usage-alerts on `dir`, replicating to
/// `replica` with `extra` settings, once Litestream has made its first
/// snapshot; and the environment it was given.
pub async fn serve_replicated(
    dir: &Path,
    replica: &str,
    extra: &[(&'static str, String)],
) -> (KeelProcess, Vec<(&'static str, String)>) {
    let mut env = env(dir, replica);
    env.push(("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()));
    env.extend(extra.iter().cloned());
    let keel = KeelProcess::serve(command(
        crate::KEEL,
        dir,
        &env,
        &["serve", "accounts", "usage-alerts"],
    ))
    .await;
    let first = keel_testkit::eventually(Duration::from_secs(60), || {
        ltx_files(replica).filter(|n| *n > 0)
    })
    .await;
    assert!(first.is_some(), "Litestream made its first snapshot");
    (keel, env)
}
