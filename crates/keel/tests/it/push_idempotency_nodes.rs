//! Two keel processes on one PostgreSQL, given the same POST /send with
//! the same `Idempotency-Key` at the same moment (a client retrying
//! through a load balancer that sent each try to another node): one send,
//! every device reached once.

use std::time::Duration;

use keel_testkit::FakeExpo;
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use serde_json::{Value, json};

use crate::KEEL;
use crate::process::platform_on;
use crate::push_common::{seed, sent_in_db};

const DEVICES: usize = 50;

#[tokio::test]
async fn retries_of_one_key_on_two_nodes_make_one_send() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    if !db.is_postgres() {
        println!("two nodes on one database: runs in the PostgreSQL pass");
        return;
    }
    let expo = FakeExpo::start().await;
    let env = vec![
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_SVC_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_JOB_POLL_MS", "50".to_owned()),
        ("KEEL_EXPO_URL", expo.url()),
        ("KEEL_EXPO_RECEIPT_DELAY_SECS", "3600".to_owned()),
    ];
    let a = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let b = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let platform = platform_on(&db, dir.path()).await;
    let password = seed(&platform, DEVICES).await;
    let http = reqwest::Client::new();
    let tries = (0..10).map(|i| {
        let node = if i % 2 == 0 { &a } else { &b };
        http.post(format!("{}/send", node.url("svc")))
            .basic_auth("boss", Some(&password))
            .header("Idempotency-Key", "one-send-two-nodes")
            .json(&json!({"title": "Once", "body": "across nodes"}))
            .send()
    });
    let mut ids = Vec::new();
    let mut made = 0;
    for r in futures::future::join_all(tries).await {
        let r = r.unwrap();
        assert_eq!(r.status(), 202);
        if !r.headers().contains_key("idempotent-replayed") {
            made += 1;
        }
        let body: Value = r.json().await.unwrap();
        ids.push(body["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(made, 1, "one try made the send");
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    let done = keel_testkit::eventually_async(Duration::from_secs(30), || async {
        (sent_in_db(&platform.db).await == DEVICES as u64).then_some(())
    })
    .await;
    assert!(done.is_some(), "a:\n{}\nb:\n{}", a.stderr(), b.stderr());
    let stats = expo.stats();
    assert_eq!(stats.distinct_tokens, DEVICES);
    assert_eq!(stats.repeated_tokens, 0, "nothing sent twice");
}
