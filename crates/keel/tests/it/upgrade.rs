//! Upgrades from earlier releases: each release's fixture
//! (`tests/fixtures/upgrade/<version>/`, made by `scripts/upgrade-fixture`
//! with that release's binary, which filled every service through its
//! APIs) is opened by today's keel, which migrates it, and read back
//! through the APIs (`fixture.py read`): every answer must be the one the
//! release gave. On SQLite in the SQLite pass, on PostgreSQL in its pass.

use std::path::{Path, PathBuf};

use keel_testkit::process::{KeelProcess, command};
use serde_json::Value;

use crate::KEEL;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upgrade")
}

/// Every release's fixture directory for `backend`.
fn releases(backend: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path().join(backend))
        .filter(|p| p.join("reads.json").exists())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no upgrade fixture for {backend}");
    dirs
}

/// The settings `scripts/upgrade-fixture` ran the release with.
pub fn env(data: &Path, url: String) -> Vec<(&'static str, String)> {
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", data.display().to_string()),
        ("DATABASE_URL", url),
        (
            "KEEL_SECRET_KEY",
            "dXBncmFkZS1maXh0dXJlLXNlY3JldC1rZXktMzJiISE=".to_owned(),
        ),
        (
            "KEEL_ACCOUNTS_JWT_SECRET",
            "upgrade-fixture-jwt-secret-0123456789abc".to_owned(),
        ),
        (
            "KEEL_CHANNEL_PUBLIC_URL",
            "http://127.0.0.1:8083".to_owned(),
        ),
        (
            "KEEL_STREAM_API_KEY",
            "upgrade-fixture-stream-key".to_owned(),
        ),
        (
            "KEEL_STREAM_API_SECRET",
            "upgrade-fixture-stream-secret".to_owned(),
        ),
        ("KEEL_CHANNEL_EMOTE_CRON", "0 0 1 1 *".to_owned()),
        ("KEEL_CHANNEL_SAMPLER_CRON", "0 0 1 1 *".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
    ]);
    for l in keel::services::http().map(|s| s.listener) {
        env.push((l.var, "127.0.0.1:0".to_owned()));
    }
    env
}

/// Today's keel on a release's database answers what the release did.
async fn reads_as_released(fixture: &Path, data: &Path, url: String) {
    let now = read(fixture, data, url).await;
    let then: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("reads.json")).unwrap())
            .unwrap();
    let (now, then) = (now.as_object().unwrap(), then.as_object().unwrap());
    let differ: Vec<String> = then
        .iter()
        .filter(|(k, v)| !now.get(*k).is_some_and(|n| holds(n, v)))
        .map(|(k, v)| {
            format!(
                "{k}:\n  then {v}\n  now  {}",
                now.get(k).unwrap_or(&Value::Null)
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "{}: {}",
        fixture.display(),
        differ.join("\n")
    );
    println!("{}: {} reads unchanged", fixture.display(), then.len());
}

/// What today's keel on the database at `url` answers to the fixture's
/// reads (`fixture.py read`), with the settings the fixture was made with.
pub async fn read(fixture: &Path, data: &Path, url: String) -> Value {
    let keel = KeelProcess::serve(command(KEEL, data, &env(data, url), &["serve"])).await;
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("meta.json")).unwrap()).unwrap();
    let origin = |s: &str| {
        let u = keel.url(s);
        u.strip_suffix("/svc/v1").unwrap_or(u).to_owned()
    };
    let out = tokio::process::Command::new("python3")
        .arg(fixtures().join("fixture.py"))
        .arg("read")
        .env("ACCOUNTS", origin("accounts"))
        .env("USAGE_ALERTS", origin("usage-alerts"))
        .env("SVC", origin("svc"))
        .env("CHANNEL_API", origin("channel-api"))
        .env("FIXTURE_DIR", fixture)
        .env(
            "SVC_APP_PASSWORD",
            meta["svc_app_password"].as_str().unwrap(),
        )
        .output()
        .await
        .expect("run python3");
    assert!(
        out.status.success(),
        "{}{}\nkeel:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        keel.stderr()
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Whether `now` says everything `then` said, the same: every member of an
/// object (a later release may add members), every item of an array in
/// order, every other value equal.
fn holds(now: &Value, then: &Value) -> bool {
    match (now, then) {
        (Value::Object(n), Value::Object(t)) => t
            .iter()
            .all(|(k, tv)| n.get(k).is_some_and(|nv| holds(nv, tv))),
        (Value::Array(n), Value::Array(t)) => {
            n.len() == t.len() && n.iter().zip(t).all(|(nv, tv)| holds(nv, tv))
        }
        _ => now == then,
    }
}

#[test]
fn a_later_release_may_add_members_but_not_change_them() {
    use serde_json::json;
    assert!(holds(
        &json!({"a": 1, "b": [{"c": 2, "d": 3}]}),
        &json!({"a": 1, "b": [{"c": 2}]})
    ));
    assert!(!holds(&json!({"a": 2}), &json!({"a": 1})));
    assert!(!holds(&json!({"b": [1, 2]}), &json!({"b": [1]})));
    assert!(!holds(&json!({}), &json!({"a": null})));
}

#[tokio::test]
async fn today_reads_every_record_a_release_wrote_on_sqlite() {
    if keel_testkit::db::postgres_url().is_some() {
        return;
    }
    for fixture in releases("sqlite") {
        let data = tempfile::tempdir().unwrap();
        let db = data.path().join("keel.db");
        std::fs::copy(fixture.join("keel.db"), &db).unwrap();
        reads_as_released(&fixture, data.path(), format!("sqlite://{}", db.display())).await;
    }
}

#[tokio::test]
async fn today_reads_every_record_a_release_wrote_on_postgresql() {
    let Some(base) = keel_testkit::db::postgres_url() else {
        return;
    };
    for fixture in releases("postgres") {
        let name = format!("keel_upgrade_{}", uuid::Uuid::new_v4().simple());
        let admin = keel_testkit::db::PgDatabase::create(&base, &name).await;
        let loaded = tokio::process::Command::new("psql")
            .args(["-q", "-v", "ON_ERROR_STOP=1", "-d", &admin.url, "-f"])
            .arg(fixture.join("keel.sql"))
            .output()
            .await
            .expect("run psql");
        assert!(
            loaded.status.success(),
            "{}",
            String::from_utf8_lossy(&loaded.stderr)
        );
        let data = tempfile::tempdir().unwrap();
        reads_as_released(&fixture, data.path(), admin.url.clone()).await;
        // Dropping a database waits for a checkpoint: on a busy machine
        // that takes as long as it takes, so no clock is put on it.
        admin.drop_it().await;
    }
}
