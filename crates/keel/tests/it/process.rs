//! The binary as a process: defaults, bad configuration, signals,
//! concurrent migrators, durability of jobs across a SIGKILL.

use std::net::SocketAddr;
use std::time::Duration;

use keel_platform::config::{PlatformConfig, Source};
use keel_platform::mail::{self, Mail};
use keel_platform::sea_orm::{ConnectionTrait, Statement, TransactionTrait};
use keel_platform::{Platform, migrate};
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use keel_testkit::{Mode, TcpProxy};
use nix::sys::signal::Signal;

use crate::KEEL;

/// Every listener on a free port (only one test may use the defaults).
fn free_ports() -> Vec<(&'static str, String)> {
    let mut env = keel_testkit::offline_env();
    env.push(("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()));
    for l in keel::services::http().map(|s| s.listener) {
        env.push((l.var, "127.0.0.1:0".to_owned()));
    }
    env
}

/// Environment for a process on `db` with every listener on a free port.
fn env_for(db: &TestDb, dir: &std::path::Path) -> Vec<(&'static str, String)> {
    let mut env = free_ports();
    env.push(("KEEL_DATA_DIR", dir.display().to_string()));
    env.push(("DATABASE_URL", db.url.clone()));
    env.push(("KEEL_JOB_POLL_MS", "50".to_owned()));
    env
}

#[tokio::test]
async fn serve_with_no_environment_in_an_empty_directory_starts_all_five_listeners() {
    let dir = tempfile::tempdir().unwrap();
    // Defaults everywhere, but no call to the internet.
    let offline = keel_testkit::offline_env();
    let mut keel = KeelProcess::serve(command(KEEL, dir.path(), &offline, &["serve"])).await;
    let expected = [
        ("accounts", "http://127.0.0.1:8081"),
        ("usage-alerts", "http://127.0.0.1:8082"),
        ("channel-web", "http://127.0.0.1:8083"),
        ("channel-api", "http://127.0.0.1:8084"),
        ("svc", "http://127.0.0.1:8085/svc/v1"),
        ("metrics", "http://127.0.0.1:9100/metrics"),
    ];
    for (name, url) in expected {
        assert_eq!(keel.url(name), url, "{}", keel.stdout());
    }
    for port in 8081..=8085 {
        for path in ["/healthz", "/readyz"] {
            let resp = reqwest::get(format!("http://127.0.0.1:{port}{path}"))
                .await
                .unwrap();
            assert_eq!(resp.status(), 200, "{port}{path}");
        }
    }
    assert!(
        dir.path().join("data/keel.db").exists(),
        "SQLite under ./data"
    );
    keel.signal(Signal::SIGTERM);
    assert!(keel.wait(Duration::from_secs(15)).await.success());
}

#[tokio::test]
async fn a_bad_configuration_value_exits_non_zero_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("KEEL_DB_MAX_CONNECTIONS", "lots"),
        ("KEEL_ACCOUNTS_ADDR", "not-an-address"),
        ("DATABASE_URL", "mysql://localhost/keel"),
        ("KEEL_LOG_FORMAT", "xml"),
        ("REDIS_URL", "http://localhost"),
        ("SKIP_MIGRATIONS", "maybe"),
    ];
    for (var, value) in cases {
        let mut env = free_ports();
        env.push((var, value.to_owned()));
        let mut p = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["serve"]));
        let status = p.wait(Duration::from_secs(30)).await;
        assert!(!status.success(), "{var}={value} must fail");
        assert!(p.stderr().contains(var), "{var}: {}", p.stderr());
    }
}

#[tokio::test]
async fn in_production_accounts_refuses_to_start_without_smtp_unless_mail_to_files_is_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let production = [("KEEL_ENV", "production")];
    let exposed = [("KEEL_ACCOUNTS_ADDR", "0.0.0.0:0")];
    for extra in [&production[..], &exposed[..]] {
        let mut env = free_ports();
        env.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
        let mut p = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["serve", "accounts"]));
        assert!(
            !p.wait(Duration::from_secs(30)).await.success(),
            "{extra:?}"
        );
        let err = p.stderr();
        assert!(
            err.contains("KEEL_SMTP_URL") && err.contains("KEEL_MAIL_TO_FILES"),
            "{err}"
        );
    }
    let mut env = free_ports();
    env.push(("KEEL_ENV", "production".to_owned()));
    env.push(("KEEL_MAIL_TO_FILES", "true".to_owned()));
    let mut keel =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "accounts"])).await;
    keel.signal(Signal::SIGTERM);
    assert!(keel.wait(Duration::from_secs(20)).await.success());
    assert!(
        keel.stderr().contains("mail is written to files"),
        "it says where mail goes: {}",
        keel.stderr()
    );
}

#[tokio::test]
async fn an_unreachable_database_fails_the_start_without_printing_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = free_ports();
    env.push((
        "DATABASE_URL",
        "postgres://keel:hunter2@127.0.0.1:1/keel".to_owned(),
    ));
    env.push(("KEEL_DB_ACQUIRE_TIMEOUT_SECS", "2".to_owned()));
    let mut p = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["serve"]));
    assert!(!p.wait(Duration::from_secs(30)).await.success());
    let err = p.stderr();
    assert!(err.contains("DATABASE_URL"), "{err}");
    assert!(!err.contains("hunter2"), "the password leaked: {err}");
}

#[tokio::test]
async fn a_port_in_use_fails_the_start_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let db = TestDb::create(dir.path()).await;
    let mut env = env_for(&db, dir.path());
    env.push(("KEEL_SVC_ADDR", taken.local_addr().unwrap().to_string()));
    let mut p = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["serve", "svc"]));
    assert!(!p.wait(Duration::from_secs(30)).await.success());
    assert!(p.stderr().contains("KEEL_SVC_ADDR"), "{}", p.stderr());
}

#[tokio::test]
async fn sigterm_during_a_slow_request_lets_it_complete_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    // /readyz pings Redis; a slow Redis makes a slow request (slower than
    // the request's drain, within keel's one-second limit on a command).
    let redis: SocketAddr = "127.0.0.1:6379".parse().unwrap();
    let proxy = TcpProxy::start(redis).await;
    let mut env = env_for(&db, dir.path());
    env.push(("REDIS_URL", format!("redis://{}", proxy.addr)));
    env.push((
        "KEEL_REDIS_PREFIX",
        format!("keel-test:{}:", uuid::Uuid::new_v4().simple()),
    ));
    let mut keel =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "accounts"])).await;
    let url = format!("{}/readyz", keel.url("accounts"));
    proxy.set_mode(Mode::Delay(Duration::from_millis(900)));
    let started = std::time::Instant::now();
    let slow = tokio::spawn(async move { reqwest::get(url).await });
    let in_flight =
        keel_testkit::eventually(Duration::from_secs(5), || (proxy.held() > 0).then_some(())).await;
    assert!(in_flight.is_some(), "the slow request reached the database");
    keel.signal(Signal::SIGTERM);
    let resp = slow
        .await
        .unwrap()
        .expect("the in-flight request is answered");
    assert_eq!(resp.status(), 200);
    assert!(
        started.elapsed() >= Duration::from_millis(850),
        "it really was slow"
    );
    let status = keel.wait(Duration::from_secs(15)).await;
    assert_eq!(status.code(), Some(0), "{}", keel.stderr());
}

async fn history_rows(db: &TestDb, dir: &std::path::Path) -> Vec<(String, i64)> {
    let platform = platform_on(db, dir).await;
    let rows = platform
        .db
        .read()
        .query_all_raw(Statement::from_string(
            platform.db.backend(),
            "SELECT component, version FROM keel_migrations ORDER BY component, version",
        ))
        .await
        .unwrap();
    rows.iter()
        .map(|r| {
            (
                r.try_get("", "component").unwrap(),
                r.try_get("", "version").unwrap(),
            )
        })
        .collect()
}

pub async fn platform_on(db: &TestDb, dir: &std::path::Path) -> Platform {
    let src = Source::from_pairs([
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
    ]);
    Platform::connect(PlatformConfig::from_source(&src).unwrap())
        .await
        .unwrap()
}

#[tokio::test]
async fn two_migrate_processes_started_together_apply_each_migration_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let env = env_for(&db, dir.path());
    // Hold the migration lock so both processes must wait for it.
    let holder = platform_on(&db, dir.path()).await;
    let txn = holder.db.write().begin().await.unwrap();
    if holder.db.is_postgres() {
        let row = txn
            .query_one_raw(Statement::from_string(
                holder.db.backend(),
                "SELECT current_schema() AS s",
            ))
            .await
            .unwrap()
            .unwrap();
        let key = migrate::advisory_lock_key(&row.try_get::<String>("", "s").unwrap());
        txn.execute_unprepared(&format!("SELECT pg_advisory_xact_lock({key})"))
            .await
            .unwrap();
    } else {
        txn.execute_unprepared("CREATE TABLE lock_holder (id INTEGER)")
            .await
            .unwrap();
    }
    let mut a = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["migrate"]));
    let mut b = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["migrate"]));
    let both_wait = keel_testkit::eventually(Duration::from_secs(20), || {
        let waiting = |p: &KeelProcess| p.stderr().contains("Waiting for the migration lock");
        (waiting(&a) && waiting(&b)).then_some(())
    })
    .await;
    assert!(both_wait.is_some(), "a: {}\nb: {}", a.stderr(), b.stderr());
    txn.rollback().await.unwrap();
    assert!(
        a.wait(Duration::from_secs(30)).await.success(),
        "{}",
        a.stderr()
    );
    assert!(
        b.wait(Duration::from_secs(30)).await.success(),
        "{}",
        b.stderr()
    );
    let (out_a, out_b) = (a.stdout(), b.stdout());
    let applied = |out: &str| out.lines().filter(|l| l.starts_with("applied")).count();
    let expected = history_rows(&db, dir.path()).await.len();
    assert!(expected > 0);
    assert_eq!(
        applied(&out_a) + applied(&out_b),
        expected,
        "a:\n{out_a}\nb:\n{out_b}"
    );
    assert!(
        out_a.contains("nothing to migrate") || out_b.contains("nothing to migrate"),
        "the other found nothing to do: a:\n{out_a}\nb:\n{out_b}"
    );
}

#[tokio::test]
async fn a_job_enqueued_before_a_sigkill_runs_exactly_once_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let env = env_for(&db, dir.path());
    let mut first =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "accounts"])).await;
    // Enqueue a mail due in two seconds, then kill the process before then.
    let platform = platform_on(&db, dir.path()).await;
    let due = chrono::Utc::now() + chrono::Duration::seconds(2);
    let job = Mail {
        to: "ada@example.com".into(),
        subject: "durable".into(),
        text: "hello".into(),
        ..Mail::default()
    };
    mail::enqueue_at(platform.db.write(), job, due)
        .await
        .unwrap();
    first.signal(Signal::SIGKILL);
    first.wait(Duration::from_secs(10)).await;
    // A fixed wait: the job comes due while keel is down (a time, not a
    // condition).
    tokio::time::sleep_until((std::time::Instant::now() + Duration::from_millis(2500)).into())
        .await;
    let mail_dir = dir.path().join("mail");
    assert!(
        keel_testkit::mail_files(&mail_dir).is_empty(),
        "nothing ran while keel was down"
    );

    let mut second =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "accounts"])).await;
    let delivered = keel_testkit::eventually(Duration::from_secs(10), || {
        let m = keel_testkit::mail_files(&mail_dir);
        (!m.is_empty()).then_some(m)
    })
    .await
    .expect("the job ran after the restart");
    keel_testkit::jobs_drained(&platform.db).await;
    assert_eq!(keel_testkit::mail_files(&mail_dir).len(), 1, "exactly once");
    assert_eq!(delivered[0].subject, "durable");
    let left = platform
        .db
        .read()
        .query_one_raw(Statement::from_string(
            platform.db.backend(),
            "SELECT COUNT(*) AS n FROM keel_jobs",
        ))
        .await
        .unwrap()
        .unwrap()
        .try_get::<i64>("", "n")
        .unwrap();
    assert_eq!(left, 0);
    second.signal(Signal::SIGTERM);
    assert!(second.wait(Duration::from_secs(15)).await.success());
}
