//! Expo's 600 notifications a second are per project, not per process: two
//! keel processes sending one large send through one Redis stay within the
//! limit together, and every device gets its notification exactly once.

use std::collections::HashSet;
use std::time::Duration;

use keel_testkit::FakeExpo;
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use serde_json::{Value, json};

use crate::KEEL;
use crate::process::platform_on;
use crate::push_common::{seed, sent_in_db};

const DEVICES: usize = 2400;

#[tokio::test]
async fn two_processes_sharing_redis_stay_within_expos_limit_together() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let expo = FakeExpo::start().await;
    let prefix = format!("keel-test:{}:", uuid::Uuid::new_v4().simple());
    let env = |node: &str| -> Vec<(&'static str, String)> {
        vec![
            ("KEEL_DATA_DIR", dir.path().display().to_string()),
            ("DATABASE_URL", db.url.clone()),
            ("REDIS_URL", keel_testkit::redis_url()),
            ("KEEL_REDIS_PREFIX", prefix.clone()),
            ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
            ("KEEL_SVC_ADDR", "127.0.0.1:0".to_owned()),
            ("KEEL_JOB_POLL_MS", "50".to_owned()),
            ("KEEL_JOB_CONCURRENCY", "4".to_owned()),
            ("KEEL_EXPO_URL", expo.url()),
            ("KEEL_EXPO_RATE_PER_SECOND", "600".to_owned()),
            ("KEEL_EXPO_RECEIPT_DELAY_SECS", "3600".to_owned()),
            // Tells the two apart at the fake.
            ("KEEL_EXPO_ACCESS_TOKEN", format!("token-{node}")),
        ]
    };
    let a = KeelProcess::serve(command(KEEL, dir.path(), &env("a"), &["serve", "svc"])).await;
    let b = KeelProcess::serve(command(KEEL, dir.path(), &env("b"), &["serve", "svc"])).await;

    let platform = platform_on(&db, dir.path()).await;
    let password = seed(&platform, DEVICES).await;
    let r = reqwest::Client::new()
        .post(format!("{}/send", a.url("svc")))
        .basic_auth("boss", Some(&password))
        .json(&json!({"title": "Shared", "body": "limit"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["recipients"], DEVICES);

    let done = keel_testkit::eventually_async(Duration::from_secs(60), || async {
        (sent_in_db(&platform.db).await == DEVICES as u64).then_some(())
    })
    .await;
    assert!(
        done.is_some(),
        "the send finished; a:\n{}\nb:\n{}",
        a.stderr(),
        b.stderr()
    );
    let stats = expo.stats();
    assert_eq!(
        stats.rate_limited, 0,
        "Expo never answered 429: the two stayed within 600/s together"
    );
    assert_eq!(stats.distinct_tokens, DEVICES, "nothing lost");
    assert_eq!(stats.repeated_tokens, 0, "nothing sent twice");
    let senders: HashSet<String> = expo
        .requests()
        .into_iter()
        .filter_map(|r| r.authorization)
        .collect();
    assert_eq!(
        senders,
        HashSet::from(["Bearer token-a".to_owned(), "Bearer token-b".to_owned()]),
        "both processes sent"
    );
}
