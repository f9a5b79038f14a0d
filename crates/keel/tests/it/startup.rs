//! Starting in a container: the listeners answer liveness from the first
//! moment (a migration waiting on a lock must not fail a liveness probe),
//! secrets can come from files (`NAME_FILE`), and a missing CA bundle is
//! named with its fix.

use std::time::Duration;

use keel_testkit::db::TestDb;
use keel_testkit::get_json as get;
use keel_testkit::process::{KeelProcess, command};
use serde_json::Value;

use crate::KEEL;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn while_migrations_wait_on_a_lock_healthz_answers_and_readyz_says_so() {
    if keel_testkit::db::postgres_url().is_none() {
        return; // the migration lock is PostgreSQL's
    }
    let db = TestDb::postgres().await;
    let dir = tempfile::tempdir().unwrap();
    let txn = db.hold_migration_lock().await;
    // A port picked free can be taken by another test before keel binds
    // it: then keel exits and another process answers; pick again.
    let mut started = None;
    for _ in 0..3 {
        let port = free_port();
        let base = format!("http://127.0.0.1:{port}");
        let mut env = keel_testkit::offline_env();
        env.extend([
            ("KEEL_DATA_DIR", dir.path().display().to_string()),
            ("DATABASE_URL", db.url.clone()),
            ("KEEL_ACCOUNTS_ADDR", format!("127.0.0.1:{port}")),
            ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
            ("KEEL_START_HOLD_SECS", "2".to_owned()),
        ]);
        let mut p = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["serve", "accounts"]));
        let live = keel_testkit::eventually_async(Duration::from_secs(10), || async {
            get(&format!("{base}/healthz")).await
        })
        .await;
        if p.try_status().is_none() {
            started = Some((p, port, base, live));
            break;
        }
    }
    let (mut p, port, base, live) = started.expect("keel bound one of three free ports");
    let live = live.unwrap_or_else(|| panic!("no /healthz while migrating:\n{}", p.stderr()));
    assert_eq!(live.0, 200);
    // Opening the database comes first and is short; then the migration
    // waits on the lock for as long as the test holds it.
    let migrating = keel_testkit::eventually_async(Duration::from_secs(10), || async {
        get(&format!("{base}/readyz"))
            .await
            .filter(|(_, b)| b["checks"]["startup"] == "migrating the database")
    })
    .await;
    let (status, body) = migrating.unwrap_or_else(|| panic!("never migrating:\n{}", p.stderr()));
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "starting");
    // Held for KEEL_START_HOLD_SECS, then refused: the start takes longer.
    let asked = std::time::Instant::now();
    let r = reqwest::get(format!("{base}/account")).await.unwrap();
    assert!(asked.elapsed() >= Duration::from_secs(2), "held first");
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "5");
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["code"], "SERVICE_UNAVAILABLE",
        "accounts' own shape: {body}"
    );
    // A request held when the start completes is answered by the service.
    let held = tokio::spawn(reqwest::get(format!("{base}/account/sessions")));
    // A round trip after it was sent: it is in, and still held.
    let (status, _) = get(&format!("{base}/readyz")).await.unwrap();
    assert_eq!(status, 503);
    assert!(!held.is_finished(), "held until the service is up");
    txn.rollback().await.unwrap();
    let held = held.await.unwrap().unwrap();
    assert_eq!(held.status(), 401, "answered by accounts once it is up");
    let ready = keel_testkit::eventually_async(Duration::from_secs(20), || async {
        get(&format!("{base}/readyz"))
            .await
            .filter(|(s, _)| *s == 200)
    })
    .await;
    assert!(ready.is_some(), "ready once migrated:\n{}", p.stderr());
    let (status, _) = get(&format!("{base}/account")).await.unwrap();
    assert_eq!(status, 401, "the service's own routes");
    // The image's HEALTHCHECK (`keel probe`, no URL) finds this listener.
    let env = [
        ("PORT", "9".to_owned()),
        ("KEEL_ACCOUNTS_ADDR", format!("0.0.0.0:{port}")),
    ];
    let mut probe = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["probe"]));
    assert!(probe.wait(Duration::from_secs(10)).await.success());
    p.kill().await;
}

#[tokio::test]
async fn a_secret_can_come_from_a_file_named_by_its_file_variable() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret-key");
    // 32 bytes, base64, with the line break an editor or `echo` leaves.
    std::fs::write(&secret, "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n").unwrap();
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        ("KEEL_SECRET_KEY_FILE", secret.display().to_string()),
        ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
    ]);
    let mut p = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "accounts"])).await;
    p.kill().await;

    env.push(("KEEL_SECRET_KEY", "set twice".to_owned()));
    let mut p = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["serve", "accounts"]));
    let status = p.wait(Duration::from_secs(20)).await;
    assert!(!status.success());
    let err = p.stderr();
    assert!(err.contains("KEEL_SECRET_KEY_FILE"), "{err}");
    assert!(!err.contains("MDEyMzQ1"), "never the secret: {err}");
}

#[tokio::test]
async fn without_ca_certificates_keel_says_so_and_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        (
            "SSL_CERT_FILE",
            dir.path().join("none.pem").display().to_string(),
        ),
        ("SSL_CERT_DIR", dir.path().display().to_string()),
        ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
    ]);
    let mut p = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["serve", "accounts"]));
    let status = p.wait(Duration::from_secs(20)).await;
    assert!(!status.success());
    let err = p.stderr();
    assert!(
        err.contains("no CA certificates were found") && err.contains("SSL_CERT_FILE"),
        "{err}"
    );
}

#[tokio::test]
async fn a_redis_away_at_start_is_an_outage_served_degraded_not_a_failed_start() {
    let redis_addr: std::net::SocketAddr = keel_testkit::redis_url()
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let redis = keel_testkit::TcpProxy::start(redis_addr).await;
    redis.go_down();
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("REDIS_URL", format!("redis://{}", redis.addr)),
        ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
    ]);
    let mut p = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "accounts"])).await;
    let readyz = format!("{}/readyz", p.url("accounts"));
    let (status, body) = get(&readyz).await.unwrap();
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("degraded")),
        "{body}"
    );
    redis.come_back();
    let ok = keel_testkit::eventually_async(Duration::from_secs(20), || async {
        get(&readyz).await.filter(|(_, b)| b["status"] == "ok")
    })
    .await;
    assert!(ok.is_some(), "Redis used once it answers:\n{}", p.stderr());
    p.kill().await;
}

#[tokio::test]
async fn on_sigterm_readyz_fails_while_requests_are_still_served_then_it_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_SHUTDOWN_DRAIN_SECS", "3".to_owned()),
    ]);
    let mut p = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "accounts"])).await;
    let base = p.url("accounts").to_owned();
    let asked = std::time::Instant::now();
    p.signal(nix::sys::signal::Signal::SIGTERM);
    let draining = keel_testkit::eventually_async(Duration::from_secs(5), || async {
        get(&format!("{base}/readyz"))
            .await
            .filter(|(s, b)| *s == 503 && b["status"] == "draining")
    })
    .await;
    assert!(draining.is_some(), "/readyz says draining:\n{}", p.stderr());
    let (status, _) = get(&format!("{base}/account")).await.unwrap();
    assert_eq!(status, 401, "an ordinary request is still served");
    assert_eq!(get(&format!("{base}/healthz")).await.unwrap().0, 200);
    let exit = p.wait(Duration::from_secs(20)).await;
    assert!(exit.success(), "{exit:?}");
    assert!(
        asked.elapsed() >= Duration::from_secs(3),
        "it drained first"
    );
    assert!(p.stderr().contains("draining"), "{}", p.stderr());
}
