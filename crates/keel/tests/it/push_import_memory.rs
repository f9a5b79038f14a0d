//! The largest device import the upload limit allows, of lines that are
//! all refused, in a real process: keel's peak memory stays bounded (the
//! upload is read as it arrives, the refused lines beyond the first 100
//! are only counted), and the report says what it did.

use std::time::Duration;

use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use nix::sys::signal::Signal;
use serde_json::Value;

use crate::KEEL;

/// The process's peak resident memory, in MiB.
fn peak_mib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap();
    kib / 1024
}

#[tokio::test]
async fn twenty_mebibytes_of_refused_lines_leave_keels_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_SVC_ADDR", "127.0.0.1:0".to_owned()),
        ("RUST_LOG", "warn".to_owned()),
        // Every line read, however many: the bound must come from the
        // report, not from the row limit.
        ("KEEL_SVC_IMPORT_MAX_ROWS", "100000000".to_owned()),
        ("KEEL_REQUEST_TIMEOUT_SECS", "120".to_owned()),
    ]);
    let mut add = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &env,
        &["svc", "admin", "add", "boss"],
    ));
    assert!(add.wait(Duration::from_secs(60)).await.success());
    let mut pw = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &env,
        &["svc", "app-password", "add", "boss", "t"],
    ));
    assert!(pw.wait(Duration::from_secs(60)).await.success());
    let password = pw.stdout().trim().rsplit(": ").next().unwrap().to_owned();
    let mut keel = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;

    let limit = 20 * 1024 * 1024;
    let mut file = Vec::with_capacity(limit);
    file.extend_from_slice(b"push_token,device_type\n");
    let mut rows = 0u64;
    while file.len() + 7 < limit - 1024 {
        file.extend_from_slice(b"x,ios,\n");
        rows += 1;
    }
    let before = peak_mib(keel.pid());
    let part = reqwest::multipart::Part::bytes(file)
        .file_name("devices.csv")
        .mime_str("text/csv")
        .unwrap();
    let r = reqwest::Client::new()
        .post(format!("{}/devices/import", keel.url("svc")))
        .basic_auth("boss", Some(&password))
        .multipart(reqwest::multipart::Form::new().part("file", part))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let report: Value = r.json().await.unwrap();
    let after = peak_mib(keel.pid());
    assert_eq!(report["errors"].as_array().unwrap().len(), 100, "{report}");
    let refused = 100 + report["errors_not_listed"].as_u64().unwrap();
    if report["complete"] == true {
        assert_eq!(refused, rows, "every line read and refused");
    } else {
        // Out of time on a slow machine: it says where it stopped.
        let stopped = report["stopped_at_line"].as_u64().unwrap();
        assert_eq!(refused, stopped - 2, "{report}");
    }
    assert!(
        after.saturating_sub(before) < 64,
        "peak memory grew from {before} MiB to {after} MiB for {rows} refused lines"
    );
    keel.signal(Signal::SIGTERM);
    assert!(
        keel.wait(Duration::from_secs(20)).await.success(),
        "{}",
        keel.stderr()
    );
}
