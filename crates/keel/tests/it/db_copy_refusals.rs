//! What `keel db copy` refuses, each with a clear message and nothing
//! written: a source behind or ahead of this keel's migrations, a target
//! that holds keel's rows or belongs to another version, a target it
//! cannot reach, a source written while it was copied. And a copy killed
//! half-way: run again, it ends identical to the source.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use nix::sys::signal::Signal;

use crate::KEEL;
use crate::db_copy::{db_copy, migrate};
use crate::upgrade::{env, fixtures};

fn sqlite(dir: &Path, name: &str) -> String {
    format!("sqlite://{}", dir.join(name).display())
}

/// A migrated SQLite source holding `events` usage events.
async fn source(dir: &Path, events: usize) -> String {
    let url = sqlite(dir, "keel.db");
    migrate(dir, &env(dir, url.clone())).await;
    let mut db = rusqlite::Connection::open(dir.join("keel.db")).unwrap();
    let tx = db.transaction().unwrap();
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO ua_events (seq, id, user_id, session_id, timestamp, model, input_tokens, \
                 output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at) \
                 VALUES (?1, ?2, 'user-1', 'session-1', '2026-11-27T00:00:00Z', 'model-x', ?1, 2, 3, 4, 0.25, \
                 '2026-11-27T00:00:00.123456789+00:00')",
            )
            .unwrap();
        for i in 0..events {
            insert
                .execute(rusqlite::params![i as i64 + 1, format!("event-{i:08}")])
                .unwrap();
        }
    }
    tx.commit().unwrap();
    url
}

fn sql(dir: &Path, file: &str, statement: &str) {
    rusqlite::Connection::open(dir.join(file))
        .unwrap()
        .execute_batch(statement)
        .unwrap();
}

const FUTURE: &str = "INSERT INTO keel_migrations (component, version, name, applied_at) \
                      VALUES ('svc', 99, 'from the future', '2030-01-01T00:00:00+00:00')";

#[tokio::test]
async fn each_refusal_says_why_and_writes_nothing() {
    if keel_testkit::db::postgres_url().is_some() {
        println!("SQLite files: runs in the SQLite pass");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let e = env(d, sqlite(d, "keel.db"));
    // Behind: a release's database not migrated yet.
    std::fs::copy(fixtures().join("0.1.0/sqlite/keel.db"), d.join("old.db")).unwrap();
    let (ok, _, err) = db_copy(
        d,
        &e,
        &["--from", &sqlite(d, "old.db"), "--to", &sqlite(d, "t1.db")],
    )
    .await;
    assert!(!ok && err.contains("run `keel migrate`"), "{err}");
    assert!(!d.join("t1.db").exists() && !d.join("t1.db.copying").exists());
    // Ahead: a migration this keel does not know.
    let from = source(d, 10).await;
    std::fs::copy(d.join("keel.db"), d.join("new.db")).unwrap();
    sql(d, "new.db", FUTURE);
    let (ok, _, err) = db_copy(
        d,
        &e,
        &["--from", &sqlite(d, "new.db"), "--to", &sqlite(d, "t1.db")],
    )
    .await;
    assert!(!ok && err.contains("newer keel"), "{err}");
    // A target that holds keel's rows: refused, left as it was.
    let (ok, out, err) = db_copy(d, &e, &["--from", &from, "--to", &sqlite(d, "t1.db")]).await;
    assert!(ok, "{out}{err}");
    let before = std::fs::read(d.join("t1.db")).unwrap();
    let (ok, _, err) = db_copy(d, &e, &["--from", &from, "--to", &sqlite(d, "t1.db")]).await;
    assert!(!ok && err.contains("already holds keel's data"), "{err}");
    assert_eq!(std::fs::read(d.join("t1.db")).unwrap(), before);
    // A target of another keel version.
    let t2 = sqlite(d, "t2.db");
    migrate(d, &env(d, t2.clone())).await;
    sql(d, "t2.db", FUTURE);
    let (ok, _, err) = db_copy(d, &e, &["--from", &from, "--to", &t2]).await;
    assert!(!ok && err.contains("another keel version"), "{err}");
    // A migrated, empty target is taken.
    let t3 = sqlite(d, "t3.db");
    migrate(d, &env(d, t3.clone())).await;
    let (ok, out, err) = db_copy(d, &e, &["--from", &from, "--to", &t3]).await;
    assert!(ok, "{out}{err}");
    // Unreachable, the same database, a source that is not there.
    let (ok, _, err) = db_copy(
        d,
        &e,
        &["--from", &from, "--to", "postgres://keel@127.0.0.1:9/keel"],
    )
    .await;
    assert!(!ok && err.contains("cannot reach the target"), "{err}");
    let (ok, _, err) = db_copy(d, &e, &["--from", &from, "--to", &from]).await;
    assert!(!ok && err.contains("the same database"), "{err}");
    let (ok, _, err) = db_copy(
        d,
        &e,
        &["--from", &sqlite(d, "none.db"), "--to", &sqlite(d, "t4.db")],
    )
    .await;
    assert!(!ok && err.contains("cannot reach the source"), "{err}");
    assert!(!d.join("t4.db").exists() && !d.join("t4.db.copying").exists());
}

#[tokio::test]
async fn a_source_written_while_it_is_copied_is_refused_and_nothing_is_kept() {
    if keel_testkit::db::postgres_url().is_some() {
        println!("SQLite files: runs in the SQLite pass");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let from = source(d, 300_000).await;
    // Another process keeps writing, as a keel still running would.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, path) = (stop.clone(), d.join("keel.db"));
        std::thread::spawn(move || {
            let db = rusqlite::Connection::open(path).unwrap();
            db.busy_timeout(Duration::from_secs(5)).unwrap();
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) {
                n += 1;
                db.execute(
                    "INSERT INTO keel_cron_ticks (name, tick) VALUES (?1, '2026-11-27T00:00:00+00:00')",
                    [format!("writer-{n}")],
                )
                .unwrap();
                std::thread::sleep(Duration::from_millis(2));
            }
            n
        })
    };
    let (ok, out, err) =
        db_copy(d, &env(d, from.clone()), &["--to", &sqlite(d, "target.db")]).await;
    stop.store(true, Ordering::SeqCst);
    let written = writer.join().unwrap();
    assert!(written > 0);
    assert!(!ok, "{out}");
    assert!(err.contains("was written while it was copied"), "{err}");
    assert!(!d.join("target.db").exists() && !d.join("target.db.copying").exists());
}

/// Starts a copy, kills it with SIGKILL once it has written some of the
/// events, then runs it again.
async fn killed_then_again(d: &Path, from: &str, to: &str) -> String {
    let e = env(d, from.to_owned());
    let mut p = KeelProcess::spawn(command(KEEL, d, &e, &["db", "copy", "--to", to]));
    let half = keel_testkit::eventually(Duration::from_secs(60), || {
        p.stderr()
            .lines()
            .any(|l| l.starts_with("ua_events: ") && l.contains(" of "))
            .then_some(())
    })
    .await;
    assert!(half.is_some(), "no progress line:\n{}", p.stderr());
    p.signal(Signal::SIGKILL);
    p.wait(Duration::from_secs(10)).await;
    let (ok, out, err) = db_copy(d, &e, &["--to", to]).await;
    assert!(ok, "{out}{err}");
    out
}

#[tokio::test]
async fn a_copy_to_sqlite_killed_half_way_then_run_again_ends_identical() {
    if keel_testkit::db::postgres_url().is_some() {
        println!("SQLite files: runs in the SQLite pass");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let from = source(d, 400_000).await;
    let out = killed_then_again(d, &from, &sqlite(d, "target.db")).await;
    assert!(
        out.lines()
            .any(|l| l.starts_with("ua_events") && l.contains("400000      400000")),
        "{out}"
    );
    assert!(!d.join("target.db.copying").exists());
}

#[tokio::test]
async fn a_copy_to_postgresql_killed_half_way_then_run_again_ends_identical() {
    if keel_testkit::db::postgres_url().is_none() {
        println!("a PostgreSQL target: runs in the PostgreSQL pass");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let from = source(d, 400_000).await;
    let pg = TestDb::postgres().await;
    let out = killed_then_again(d, &from, &pg.url).await;
    assert!(
        out.lines()
            .any(|l| l.starts_with("ua_events") && l.contains("400000      400000")),
        "{out}"
    );
}
