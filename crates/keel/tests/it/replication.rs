//! The embedded database replicated continuously (Litestream beside keel)
//! to an S3 protocol server (moto) and to a directory. Under a steady
//! stream of writes the machine is lost: Litestream and keel killed with
//! SIGKILL, the data directory deleted. keel is then restored on a new
//! data directory from the replica alone and serves; every write
//! acknowledged more than the sync interval (plus the upload, see
//! `UPLOAD`) before the loss is there. The acknowledged writes, each with
//! its age at the loss and whether it came back, are kept in a file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use keel_testkit::process::{KeelProcess, command};
use nix::sys::signal::Signal;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::KEEL;

const SYNC: Duration = Duration::from_secs(1);
/// What an upload of one second's log may take on a loaded test machine,
/// beyond the sync interval: a write older than both at the loss must be
/// in the replica.
const UPLOAD: Duration = Duration::from_secs(4);
const USER: &str = "replicated-user";

fn bin(name: &str) -> String {
    keel_testkit::tools_dir()
        .join("replication/bin")
        .join(name)
        .display()
        .to_string()
}

/// moto's S3 server on a port of its choosing, with the bucket made.
async fn s3() -> (Child, String) {
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

fn env(dir: &Path, replica: &str) -> Vec<(&'static str, String)> {
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
async fn history(base: &str) -> HashSet<String> {
    let http = reqwest::Client::new();
    let mut all = HashSet::new();
    for offset in (0..).step_by(500) {
        let page: Value = http
            .get(format!("{base}/history?limit=500&offset={offset}"))
            .bearer_auth(USER)
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

type Acked = Arc<Mutex<Vec<(String, Instant)>>>;

/// Two writers posting events until `stop`; each acknowledged one kept
/// with when its answer came.
fn writers(base: &str, stop: &Arc<AtomicBool>, acked: &Acked) -> Vec<tokio::task::JoinHandle<()>> {
    (0..2)
        .map(|w| {
            let (base, stop, acked) = (base.to_owned(), stop.clone(), acked.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                for n in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let session = format!("w{w}-{n}");
                    let r = http
                        .post(format!("{base}/event"))
                        .bearer_auth(USER)
                        .json(
                            &json!({"sessionId": session, "timestamp": "2026-11-29T10:00:00Z",
                            "model": "m", "inputTokens": 1, "outputTokens": 1, "cacheReadTokens": 0,
                            "cacheWriteTokens": 0, "costUSD": 0.0001}),
                        )
                        .send()
                        .await;
                    if r.is_ok_and(|r| r.status() == 200) {
                        acked.lock().unwrap().push((session, Instant::now()));
                    }
                }
            })
        })
        .collect()
}

/// The processes keel started (Litestream), from /proc.
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

async fn lose_the_machine_and_restore(replica: &str) {
    let dir = tempfile::tempdir().unwrap();
    let keel = KeelProcess::serve(command(
        KEEL,
        dir.path(),
        &env(dir.path(), replica),
        &["serve", "usage-alerts"],
    ))
    .await;
    assert!(
        keel.stderr()
            .contains("replicating the database continuously"),
        "{}",
        keel.stderr()
    );
    let base = keel.url("usage-alerts").to_owned();
    let acked: Acked = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let running = writers(&base, &stop, &acked);
    let warm = keel_testkit::eventually(Duration::from_secs(60), || {
        (acked.lock().unwrap().len() >= 400 && started.elapsed() > 3 * (SYNC + UPLOAD))
            .then_some(())
    })
    .await;
    assert!(warm.is_some(), "writes before the loss");

    // The loss: Litestream and keel die at once, the disk with them.
    let litestream = children(keel.pid());
    assert!(!litestream.is_empty(), "Litestream runs beside keel");
    let lost = Instant::now();
    for pid in litestream {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    }
    keel.signal(Signal::SIGKILL);
    stop.store(true, Ordering::Relaxed);
    for w in running {
        w.await.unwrap();
    }
    drop(keel);
    std::fs::remove_dir_all(dir.path()).unwrap();

    // A new machine: the replica's URL and keys, nothing else.
    let fresh = tempfile::tempdir().unwrap();
    let mut restore = KeelProcess::spawn(command(
        KEEL,
        fresh.path(),
        &env(fresh.path(), replica),
        &["restore"],
    ));
    let status = restore.wait(Duration::from_secs(120)).await;
    assert!(status.success(), "{}{}", restore.stdout(), restore.stderr());
    assert!(
        restore.stdout().contains("integrity check ok"),
        "{}",
        restore.stdout()
    );
    let again = KeelProcess::serve(command(
        KEEL,
        fresh.path(),
        &env(fresh.path(), replica),
        &["serve", "usage-alerts"],
    ))
    .await;
    let held = history(again.url("usage-alerts")).await;
    let acked = acked.lock().unwrap().clone();
    let report = record(replica, &acked, &held, lost);
    let missing_old: Vec<_> = acked
        .iter()
        .filter(|(s, at)| !held.contains(s) && lost.duration_since(*at) > SYNC + UPLOAD)
        .collect();
    assert!(
        missing_old.is_empty(),
        "{} writes acknowledged more than {:?} before the loss are not in the restored database (see {})",
        missing_old.len(),
        SYNC + UPLOAD,
        report.display()
    );
    let kept = acked.iter().filter(|(s, _)| held.contains(s)).count();
    println!(
        "{replica}: {kept} of {} acknowledged writes restored; the list is in {}",
        acked.len(),
        report.display()
    );
    assert!(kept * 2 > acked.len(), "most writes came back");
}

/// The Jepsen-style list: each acknowledged write, its age at the loss in
/// milliseconds, and whether the restored database holds it.
fn record(
    replica: &str,
    acked: &[(String, Instant)],
    held: &HashSet<String>,
    lost: Instant,
) -> PathBuf {
    let dir = keel_testkit::tools_dir().join("../tmp/replication");
    std::fs::create_dir_all(&dir).unwrap();
    let kind = if replica.starts_with("s3://") {
        "s3"
    } else {
        "dir"
    };
    let path = dir.join(format!("acknowledged-{kind}.tsv"));
    let mut text = String::from("session\tage_at_loss_ms\trestored\n");
    for (s, at) in acked {
        let age = lost.saturating_duration_since(*at).as_millis();
        text.push_str(&format!("{s}\t{age}\t{}\n", held.contains(s)));
    }
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn a_machine_lost_under_writes_comes_back_from_its_s3_replica_with_every_write_but_the_last_second()
 {
    if keel_testkit::db::postgres_url().is_some() {
        return; // the embedded database's
    }
    let (_moto, endpoint) = s3().await;
    let replica = format!(
        "s3://keel-replica/keel?endpoint={endpoint}&region=us-east-1&force-path-style=true"
    );
    lose_the_machine_and_restore(&replica).await;
}

#[tokio::test]
async fn a_machine_lost_under_writes_comes_back_from_a_directory_replica() {
    if keel_testkit::db::postgres_url().is_some() {
        return;
    }
    let replica = tempfile::tempdir().unwrap();
    lose_the_machine_and_restore(&format!("file://{}", replica.path().display())).await;
}

/// Writes `sessions` one after another, each acknowledged.
async fn write(base: &str, sessions: impl IntoIterator<Item = String>) {
    let http = reqwest::Client::new();
    for session in sessions {
        let r = http
            .post(format!("{base}/event"))
            .bearer_auth(USER)
            .json(
                &json!({"sessionId": session, "timestamp": "2026-11-29T10:00:00Z",
                "model": "m", "inputTokens": 1, "outputTokens": 1, "cacheReadTokens": 0,
                "cacheWriteTokens": 0, "costUSD": 0.0001}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
}

/// How many files the replica holds (`None` when it cannot be listed).
fn ltx_files(replica: &str) -> Option<usize> {
    let out = std::process::Command::new(bin("litestream"))
        .args(["ltx", "-json", "-level", "0", replica])
        .output()
        .ok()?;
    let files: Value = serde_json::from_slice(&out.stdout).ok()?;
    files.as_array().map(Vec::len)
}

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

async fn register(base: &str, name: &str) -> String {
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
    let mut env = env(dir.path(), &replica);
    env.push(("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()));
    let mut keel = KeelProcess::serve(command(
        KEEL,
        dir.path(),
        &env,
        &["serve", "accounts", "usage-alerts"],
    ))
    .await;
    let (accounts, events) = (
        keel.url("accounts").to_owned(),
        keel.url("usage-alerts").to_owned(),
    );
    let first = keel_testkit::eventually(Duration::from_secs(60), || {
        ltx_files(&replica).filter(|n| *n > 0)
    })
    .await;
    assert!(first.is_some(), "Litestream made its first snapshot");
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
