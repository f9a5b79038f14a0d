//! A push send survives a SIGKILL in the middle: after the restart every
//! device gets exactly one notification; no batch Expo accepted is sent
//! again and none is lost.

use std::time::Duration;

use keel_testkit::FakeExpo;
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::KEEL;
use crate::process::platform_on;
use crate::push_common::{seed, sent_in_db};

const DEVICES: usize = 1000;

fn env_for(db: &TestDb, dir: &std::path::Path, expo: &FakeExpo) -> Vec<(&'static str, String)> {
    vec![
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_SVC_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_JOB_POLL_MS", "50".to_owned()),
        ("KEEL_JOB_RETRY_BASE_MS", "100".to_owned()),
        // Claims of the killed process expire quickly.
        ("KEEL_JOB_LEASE_SECS", "2".to_owned()),
        ("KEEL_EXPO_URL", expo.url()),
        ("KEEL_EXPO_RATE_PER_SECOND", "0".to_owned()),
        ("KEEL_EXPO_RECEIPT_DELAY_SECS", "3600".to_owned()),
    ]
}

#[tokio::test]
async fn a_send_killed_midway_resumes_with_no_batch_lost_or_repeated() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let expo = FakeExpo::start().await;
    let env = env_for(&db, dir.path(), &expo);
    let mut first = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;

    let platform = platform_on(&db, dir.path()).await;
    let password = seed(&platform, DEVICES).await;

    // Expo answers four requests, then holds the rest unanswered.
    expo.hold_after(4);
    let r = reqwest::Client::new()
        .post(format!("{}/send", first.url("svc")))
        .basic_auth("boss", Some(&password))
        .json(&json!({"title": "Crash", "body": "test"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["recipients"], DEVICES);
    let id = body["id"].as_str().unwrap().to_owned();

    // Kill once the accepted batches' tickets are stored and others are
    // on the wire.
    let accepted = keel_testkit::eventually_async(Duration::from_secs(20), || async {
        let n = expo.delivered().len();
        (n >= 400 && sent_in_db(&platform.db).await == n as u64).then_some(n)
    })
    .await
    .expect("four batches accepted and stored");
    first.signal(Signal::SIGKILL);
    first.wait(Duration::from_secs(10)).await;
    assert!(accepted < DEVICES, "the send was cut short");
    // What was held never reached Expo.
    expo.release();

    let second = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let done = keel_testkit::eventually_async(Duration::from_secs(30), || async {
        (sent_in_db(&platform.db).await == DEVICES as u64).then_some(())
    })
    .await;
    assert!(
        done.is_some(),
        "the send resumed and finished; stderr:\n{}",
        second.stderr()
    );
    let per_token = expo.per_token();
    assert_eq!(per_token.len(), DEVICES, "no device was left out");
    assert!(
        per_token.values().all(|n| *n == 1),
        "no device got two: {:?}",
        per_token
            .iter()
            .filter(|(_, n)| **n > 1)
            .take(5)
            .collect::<Vec<_>>()
    );
    assert!(expo.requests().iter().all(|r| r.recipients <= 100));
    let view: Value = reqwest::Client::new()
        .get(format!("{}/send/{id}", second.url("svc")))
        .basic_auth("boss", Some(&password))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(view["status"], "sent");
    assert_eq!(view["progress"]["sent"], DEVICES);
}
