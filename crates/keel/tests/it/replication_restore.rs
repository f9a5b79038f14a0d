//! Restoring from the replica: the state at a time exactly, and a replica
//! kept whole across keel's own truncating checkpoint and its backup.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use keel_testkit::process::{KeelProcess, command};
use nix::sys::signal::Signal;
use serde_json::json;

use crate::KEEL;
use crate::replica_kit::{bin, env, history, ltx_files, register, serve_replicated, write};

/// keel on `dir` until `sessions` are written, then stopped as SIGTERM
/// stops it: Litestream syncs everything before it exits.
async fn serve_write_stop(dir: &Path, replica: &str, sessions: Vec<String>) {
    let mut keel = KeelProcess::serve(command(
        KEEL,
        dir,
        &env(dir, replica),
        &["serve", "usage-alerts"],
    ))
    .await;
    // Litestream's first sync of a database it has not seen is a
    // snapshot; then the writes are in the replica once a file more is.
    let held = keel_testkit::eventually(Duration::from_secs(60), || {
        ltx_files(replica).filter(|n| *n > 0)
    })
    .await;
    let held = held.expect("Litestream made its first snapshot");
    write(keel.url("usage-alerts"), sessions).await;
    let more = keel_testkit::eventually(Duration::from_secs(60), || {
        ltx_files(replica).filter(|n| *n > held)
    })
    .await;
    assert!(more.is_some(), "the writes reached the replica");
    keel.signal(Signal::SIGTERM);
    assert!(keel.wait(Duration::from_secs(60)).await.success());
}

/// `keel restore` (at `at`, if given) into a new data directory, served:
/// what the user's history holds there.
async fn restored(replica: &str, at: Option<&str>) -> HashSet<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["restore"];
    if let Some(at) = at {
        args.extend(["--at", at]);
    }
    let mut restore =
        KeelProcess::spawn(command(KEEL, dir.path(), &env(dir.path(), replica), &args));
    let status = restore.wait(Duration::from_secs(120)).await;
    let listing = std::process::Command::new(bin("litestream"))
        .args(["ltx", "-level", "all", replica])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    assert!(
        status.success(),
        "{}{}\nthe replica holds:\n{listing}",
        restore.stdout(),
        restore.stderr()
    );
    let mut env = env(dir.path(), replica);
    env.retain(|(k, _)| *k != "KEEL_REPLICA_URL");
    let keel =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "usage-alerts"])).await;
    history(keel.url("usage-alerts")).await
}

#[tokio::test]
async fn a_point_in_time_restore_gives_exactly_the_state_at_that_time() {
    if keel_testkit::db::postgres_url().is_some() {
        return;
    }
    let replica_dir = tempfile::tempdir().unwrap();
    let replica = format!("file://{}", replica_dir.path().display());
    let dir = tempfile::tempdir().unwrap();
    let before: Vec<String> = (0..30).map(|n| format!("before-{n}")).collect();
    let after: Vec<String> = (0..30).map(|n| format!("after-{n}")).collect();
    serve_write_stop(dir.path(), &replica, before.clone()).await;
    // Every write before is in the replica (the stop synced it); the time
    // chosen is after them, and every write after is later still.
    let at = chrono::Utc::now() + chrono::Duration::milliseconds(500);
    let later = keel_testkit::eventually(Duration::from_secs(5), || {
        (chrono::Utc::now() > at + chrono::Duration::milliseconds(500)).then_some(())
    })
    .await;
    assert!(later.is_some());
    serve_write_stop(dir.path(), &replica, after.clone()).await;

    let at = at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    println!("restoring at {at}");
    let then = restored(&replica, Some(&at)).await;
    assert_eq!(
        then,
        before.iter().cloned().collect::<HashSet<_>>(),
        "the state at {at}"
    );
    let now = restored(&replica, None).await;
    assert_eq!(
        now,
        before.into_iter().chain(after).collect::<HashSet<_>>(),
        "the newest state"
    );
}

async fn login_status(base: &str, name: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{base}/auth/login"))
        .json(&json!({"login": name, "password": "long enough, really"}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn keels_truncating_checkpoint_and_its_backup_leave_the_replica_whole() {
    if keel_testkit::db::postgres_url().is_some() {
        return;
    }
    let replica_dir = tempfile::tempdir().unwrap();
    let replica = format!("file://{}", replica_dir.path().display());
    let dir = tempfile::tempdir().unwrap();
    let (mut keel, env) = serve_replicated(dir.path(), &replica, &[]).await;
    let (accounts, events) = (
        keel.url("accounts").to_owned(),
        keel.url("usage-alerts").to_owned(),
    );
    write(&events, (0..20).map(|n| format!("one-{n}"))).await;
    register(&accounts, "kept").await;
    let gone = register(&accounts, "gone").await;
    // Deleting an account erases its rows from the disk: a truncating
    // checkpoint of the write-ahead log Litestream is reading.
    let r = reqwest::Client::new()
        .delete(format!("{accounts}/account"))
        .bearer_auth(&gone)
        .json(&json!({"password": "long enough, really"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    write(&events, (0..20).map(|n| format!("two-{n}"))).await;
    let copy = dir.path().join("copy.db");
    let mut backup = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &env,
        &["backup", copy.to_str().unwrap()],
    ));
    assert!(
        backup.wait(Duration::from_secs(60)).await.success(),
        "{}",
        backup.stderr()
    );
    write(&events, (0..20).map(|n| format!("three-{n}"))).await;
    let held = ltx_files(&replica).unwrap_or_default();
    let busy = keel
        .stderr()
        .contains("readers held it past the busy timeout");
    println!(
        "the truncating checkpoint beside Litestream: {}",
        if busy {
            "held back by its reader, completed later"
        } else {
            "completed at once"
        }
    );
    keel.signal(Signal::SIGTERM);
    assert!(keel.wait(Duration::from_secs(60)).await.success());
    assert!(ltx_files(&replica).unwrap_or_default() >= held);

    let restored_dir = tempfile::tempdir().unwrap();
    let mut renv = env.clone();
    for (k, v) in renv.iter_mut() {
        if *k == "KEEL_DATA_DIR" {
            *v = restored_dir.path().display().to_string();
        }
    }
    let mut restore = KeelProcess::spawn(command(KEEL, restored_dir.path(), &renv, &["restore"]));
    let status = restore.wait(Duration::from_secs(120)).await;
    assert!(status.success(), "{}{}", restore.stdout(), restore.stderr());
    for key in ["secret.key", "accounts-jwt.key"] {
        let _ = std::fs::copy(dir.path().join(key), restored_dir.path().join(key));
    }
    renv.retain(|(k, _)| *k != "KEEL_REPLICA_URL");
    let again = KeelProcess::serve(command(
        KEEL,
        restored_dir.path(),
        &renv,
        &["serve", "accounts", "usage-alerts"],
    ))
    .await;
    let history = history(again.url("usage-alerts")).await;
    let expected: HashSet<String> = ["one", "two", "three"]
        .iter()
        .flat_map(|b| (0..20).map(move |n| format!("{b}-{n}")))
        .collect();
    assert_eq!(
        history, expected,
        "every write, across the checkpoint and the backup"
    );
    assert_eq!(login_status(again.url("accounts"), "kept").await, 200);
    assert_eq!(
        login_status(again.url("accounts"), "gone").await,
        401,
        "the erasure is replicated too"
    );
}
