//! The embedded database replicated continuously (Litestream beside keel)
//! to an S3 protocol server (moto) and to a directory. Under a steady
//! stream of writes the machine is lost: Litestream and keel killed with
//! SIGKILL, the data directory deleted. keel is then restored on a new
//! data directory from the replica alone and serves; every write
//! acknowledged more than the sync interval (plus the upload, see
//! `UPLOAD`) before the loss is there. The acknowledged writes, each with
//! its age at the loss and whether it came back, are kept in a file.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use keel_testkit::process::{KeelProcess, command};
use nix::sys::signal::Signal;

use crate::KEEL;
use crate::replica_kit::{SYNC, UPLOAD, USER, env, event, history, s3};

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
                        .json(&event(&session))
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
    let metrics = keel_testkit::eventually_async(Duration::from_secs(30), || async {
        let text = reqwest::get(keel.url("metrics"))
            .await
            .ok()?
            .text()
            .await
            .ok()?;
        text.contains(r#"keel_dependency_up{dependency="replica"} 1"#)
            .then_some(())
    })
    .await;
    assert!(
        metrics.is_some(),
        "/metrics says the database is replicated"
    );
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
