//! `keel backup` as an operator runs it: while keel serves and writes,
//! into a new file that passes SQLite's integrity check and holds every
//! write acknowledged before it began; that file, restored as the data
//! directory's database, is served by a new keel.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use keel_testkit::process::{KeelProcess, command};
use serde_json::json;

use crate::KEEL;

fn env(dir: &std::path::Path) -> Vec<(&'static str, String)> {
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("KEEL_USAGE_ALERTS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
    ]);
    env
}

/// Every event's `sessionId` the user has, through GET /history.
async fn history(base: &str) -> HashSet<String> {
    crate::replica_kit::history_of(base, "backup-user").await
}

#[tokio::test]
async fn a_backup_taken_under_writes_restores_every_write_acknowledged_before_it() {
    if keel_testkit::db::postgres_url().is_some() {
        return; // SQLite's; the PostgreSQL answer is checked below
    }
    let dir = tempfile::tempdir().unwrap();
    let keel = KeelProcess::serve(command(
        KEEL,
        dir.path(),
        &env(dir.path()),
        &["serve", "usage-alerts"],
    ))
    .await;
    let base = keel.url("usage-alerts").to_owned();
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (base, acknowledged, stop) = (base.clone(), acknowledged.clone(), stop.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                for n in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let session = format!("w{w}-{n}");
                    let r = http
                        .post(format!("{base}/event"))
                        .bearer_auth("backup-user")
                        .json(
                            &json!({"sessionId": session, "timestamp": "2026-11-26T10:00:00Z",
                            "model": "m", "inputTokens": 1, "outputTokens": 1, "cacheReadTokens": 0,
                            "cacheWriteTokens": 0, "costUSD": 0.0001}),
                        )
                        .send()
                        .await;
                    if r.is_ok_and(|r| r.status() == 200) {
                        acknowledged.lock().unwrap().push(session);
                    }
                }
            })
        })
        .collect();
    let warm = keel_testkit::eventually(Duration::from_secs(20), || {
        (acknowledged.lock().unwrap().len() >= 500).then_some(())
    })
    .await;
    assert!(warm.is_some(), "writes before the backup");
    let before: Vec<String> = acknowledged.lock().unwrap().clone();
    let copy = dir.path().join("backups/keel-copy.db");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    let mut backup = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &env(dir.path()),
        &["backup", copy.to_str().unwrap()],
    ));
    let status = backup.wait(Duration::from_secs(60)).await;
    let during = acknowledged.lock().unwrap().len() - before.len();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    assert!(status.success(), "{}{}", backup.stdout(), backup.stderr());
    let said = backup.stdout();
    assert!(
        said.contains("integrity check ok") && said.contains("bytes"),
        "{said}"
    );
    println!(
        "{said} ({} events acknowledged before it, {during} while it ran)",
        before.len()
    );
    drop(keel);

    // Restore: a new data directory with the copy as its database.
    let restored = tempfile::tempdir().unwrap();
    std::fs::copy(&copy, restored.path().join("keel.db")).unwrap();
    for key in ["secret.key", "accounts-jwt.key"] {
        let _ = std::fs::copy(dir.path().join(key), restored.path().join(key));
    }
    let again = KeelProcess::serve(command(
        KEEL,
        restored.path(),
        &env(restored.path()),
        &["serve", "usage-alerts"],
    ))
    .await;
    let stored = history(again.url("usage-alerts")).await;
    let lost: Vec<&String> = before.iter().filter(|s| !stored.contains(*s)).collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged before the backup are missing",
        lost.len()
    );
    let mut refused = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &env(dir.path()),
        &["backup", copy.to_str().unwrap()],
    ));
    assert!(
        !refused.wait(Duration::from_secs(20)).await.success(),
        "no overwrite"
    );
    assert!(
        refused.stderr().contains("exists already"),
        "{}",
        refused.stderr()
    );
}

#[tokio::test]
async fn on_postgresql_backup_says_how_to_use_pg_dump() {
    let Some(url) = keel_testkit::db::postgres_url() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut env = env(dir.path());
    env.push(("DATABASE_URL", url));
    let mut p = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &env,
        &["backup", "/tmp/never.db"],
    ));
    assert!(!p.wait(Duration::from_secs(20)).await.success());
    assert!(p.stderr().contains("pg_dump"), "{}", p.stderr());
    assert!(!std::path::Path::new("/tmp/never.db").exists());
}

/// A file's permission bits.
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test]
async fn the_database_its_log_keys_backups_and_copies_are_the_users_alone() {
    if keel_testkit::db::postgres_url().is_some() {
        return; // the SQLite files'
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut keel = KeelProcess::serve(command(
        KEEL,
        dir.path(),
        &env(&data),
        &["serve", "usage-alerts"],
    ))
    .await;
    let r = reqwest::Client::new()
        .post(format!("{}/event", keel.url("usage-alerts")))
        .bearer_auth("mode-user")
        .json(
            &json!({"sessionId": "s1", "timestamp": "2026-11-26T10:00:00Z",
            "model": "m", "inputTokens": 1, "outputTokens": 1, "cacheReadTokens": 0,
            "cacheWriteTokens": 0, "costUSD": 0.0001}),
        )
        .send()
        .await
        .unwrap();
    assert!(
        r.status().is_success(),
        "{}",
        r.text().await.unwrap_or_default()
    );
    let backup = dir.path().join("backup.db");
    let mut b = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &env(&data),
        &["backup", backup.to_str().unwrap()],
    ));
    assert!(
        b.wait(Duration::from_secs(60)).await.success(),
        "{}",
        b.stderr()
    );
    keel.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(keel.wait(Duration::from_secs(20)).await.success());
    let copy = dir.path().join("copy.db");
    let to = format!("sqlite://{}", copy.display());
    let mut c = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &env(&data),
        &["db", "copy", "--to", &to],
    ));
    assert!(
        c.wait(Duration::from_secs(120)).await.success(),
        "{}",
        c.stderr()
    );
    assert_eq!(mode(&data), 0o700, "the data directory");
    for file in ["keel.db", "secret.key", "accounts-jwt.key"] {
        let path = data.join(file);
        if path.exists() {
            assert_eq!(mode(&path), 0o600, "{file}");
        }
    }
    assert_eq!(mode(&data.join("keel.db")), 0o600);
    for (what, path) in [("the backup", &backup), ("the copy", &copy)] {
        assert_eq!(mode(path), 0o600, "{what}");
    }
}
