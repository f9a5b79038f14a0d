//! Erasure reaches the replica: a deleted account's address is in the
//! replica's files while the account lives, and in none of them once the
//! retention docs/operations.md promises has passed (the database still
//! changing, as a serving keel's does).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::ltx_scan::{count_files, files_holding};
use crate::replica_kit::{register, serve_replicated, write};

const SNAPSHOT_SECS: u64 = 2;
const RETENTION_SECS: u64 = 4;

#[tokio::test]
async fn an_erased_address_leaves_every_replica_file_within_the_promised_retention() {
    if keel_testkit::db::postgres_url().is_some() {
        return;
    }
    let replica_dir = tempfile::tempdir().unwrap();
    let replica = format!("file://{}", replica_dir.path().display());
    let dir = tempfile::tempdir().unwrap();
    let retention = [
        ("KEEL_REPLICA_SNAPSHOT_SECS", SNAPSHOT_SECS.to_string()),
        ("KEEL_REPLICA_RETENTION_SECS", RETENTION_SECS.to_string()),
    ];
    let (keel, _) = serve_replicated(dir.path(), &replica, &retention).await;
    let accounts = keel.url("accounts").to_owned();
    let events = keel.url("usage-alerts").to_owned();

    let name = "erased-person-7c1f";
    let address = format!("{name}@example.com");
    let token = register(&accounts, name).await;
    let seen = keel_testkit::eventually(Duration::from_secs(60), || {
        let holding = files_holding(replica_dir.path(), &address);
        (!holding.is_empty()).then_some(holding)
    })
    .await;
    assert!(
        seen.is_some(),
        "the scan finds the living account's address in the replica"
    );

    let r = reqwest::Client::new()
        .delete(format!("{accounts}/account"))
        .bearer_auth(&token)
        .json(&json!({"password": "long enough, really"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let deleted = Instant::now();

    // Others keep writing, as on a serving keel: Litestream takes a
    // snapshot only of a database that changed.
    let mut others = 0;
    let mut holding = Vec::new();
    let bound = promised_bound();
    // What a loaded test machine may add.
    let give_up = bound + Duration::from_secs(60);
    while deleted.elapsed() < give_up {
        others += 1;
        write(&events, [format!("other-{others}")]).await;
        holding = files_holding(replica_dir.path(), &address);
        if holding.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let took = deleted.elapsed();
    println!(
        "the erased address left the replica {:.1} s after the deletion ({} files there now; promised within {:?})",
        took.as_secs_f64(),
        count_files(replica_dir.path()),
        bound
    );
    assert!(
        holding.is_empty(),
        "after {took:?} these replica files still hold {address}: {holding:?}"
    );
    let local = dir.path().join(".keel.db-litestream");
    assert!(local.is_dir(), "Litestream keeps its local files there");
    println!(
        "Litestream's local files: {} hold the address",
        files_holding(&local, &address).len()
    );
    drop(keel);
}

/// What docs/operations.md promises: the retention, two snapshot
/// intervals and a minute (Litestream folds its first-level files into the
/// next every 30 s and checks their age every 15 s).
fn promised_bound() -> Duration {
    Duration::from_secs(RETENTION_SECS + 2 * SNAPSHOT_SECS + 60)
}
