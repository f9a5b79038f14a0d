//! `keel db copy` from SQLite to PostgreSQL and back, with the real binary:
//! a release's database, migrated by today's keel, answers every read the
//! same after each copy; on the target, people sign in with their
//! passwords, two-factor codes and passkeys, refresh tokens keep working,
//! and a push send scheduled before the copy is sent once, by the target,
//! at its time. Every table and column keel makes is one the copy knows.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use keel_platform::config::{PlatformConfig, Source};
use keel_platform::sea_orm::{ConnectionTrait, Statement};
use keel_testkit::FakeExpo;
use keel_testkit::authenticator::{Answer, SoftPasskey};
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use serde_json::{Value, json};

use crate::KEEL;
use crate::upgrade::{env, fixtures, read};

/// Runs `keel db copy ARGS` to its end: (success, stdout, stderr).
pub async fn db_copy(
    dir: &Path,
    env: &[(&'static str, String)],
    args: &[&str],
) -> (bool, String, String) {
    let mut all = vec!["db", "copy"];
    all.extend_from_slice(args);
    let mut p = KeelProcess::spawn(command(KEEL, dir, env, &all));
    // A debug build copying 400,000 rows beside the other tests on a slow
    // two-core machine took 140 s.
    let ok = p.wait(Duration::from_secs(300)).await.success();
    (ok, p.stdout(), p.stderr())
}

pub async fn migrate(dir: &Path, env: &[(&'static str, String)]) {
    let mut p = KeelProcess::spawn(command(KEEL, dir, env, &["migrate"]));
    assert!(
        p.wait(Duration::from_secs(60)).await.success(),
        "{}",
        p.stderr()
    );
}

/// The platform on the database at `url`.
pub async fn platform(dir: &Path, url: &str) -> keel_platform::Platform {
    let src = Source::from_pairs([
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", url.to_owned()),
    ]);
    keel_platform::Platform::connect(PlatformConfig::from_source(&src).unwrap())
        .await
        .unwrap()
}

fn only_on_postgres() -> bool {
    if keel_testkit::db::postgres_url().is_none() {
        println!("copies to and from PostgreSQL: runs in the PostgreSQL pass");
        return false;
    }
    true
}

#[tokio::test]
async fn every_table_and_column_keel_makes_is_one_the_copy_knows() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("keel.db").display());
    migrate(dir.path(), &env(dir.path(), url.clone())).await;
    let p = platform(dir.path(), &url).await;
    let conn = p.db.write();
    let backend = conn.get_database_backend();
    let tables = conn
        .query_all_raw(Statement::from_string(
            backend,
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             AND name NOT LIKE 'quotebot%' AND name <> 'keel_migrations'",
        ))
        .await
        .unwrap();
    let mut sets = vec![&keel_platform::schema::MIGRATIONS];
    sets.extend(keel::services::migration_sets(
        &keel::services::http().collect::<Vec<_>>(),
    ));
    let specs: Vec<_> = sets.iter().flat_map(|s| (s.tables)()).collect();
    assert_eq!(specs.len(), tables.len(), "every table, once");
    for t in tables {
        let name: String = t.try_get("", "name").unwrap();
        let spec = specs.iter().find(|s| s.name == name).unwrap_or_else(|| {
            panic!("table {name} is made by a migration but no entity copies it")
        });
        let columns = conn
            .query_all_raw(Statement::from_string(
                backend,
                format!("SELECT name FROM pragma_table_info('{name}')"),
            ))
            .await
            .unwrap();
        let made: HashSet<String> = columns
            .iter()
            .map(|c| c.try_get::<String>("", "name").unwrap())
            .collect();
        let known: HashSet<String> = spec.columns.iter().map(|c| c.name.clone()).collect();
        assert_eq!(made, known, "{name}: the table's columns and its entity's");
        assert!(
            spec.unsupported().is_none(),
            "{name}: {:?}",
            spec.unsupported()
        );
    }
}

#[tokio::test]
async fn a_release_copied_to_postgresql_and_back_answers_every_read_as_before() {
    if !only_on_postgres() {
        return;
    }
    let fixture = fixtures().join("0.1.0/sqlite");
    let a = tempfile::tempdir().unwrap();
    let from = format!("sqlite://{}", a.path().join("keel.db").display());
    std::fs::copy(fixture.join("keel.db"), a.path().join("keel.db")).unwrap();
    migrate(a.path(), &env(a.path(), from.clone())).await;
    // Every copy is made before any read: a read signs in with a two-factor
    // code, which each database then refuses to take again.
    let pg = TestDb::postgres().await;
    let (ok, out, err) = db_copy(
        a.path(),
        &env(a.path(), from.clone()),
        &["--from", &from, "--to", &pg.url],
    )
    .await;
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("every table holds the same rows on both sides"),
        "{out}"
    );
    assert!(!out.contains("DIFFERENT"), "{out}");
    assert!(err.contains("KEEL_SECRET_KEY: the value set here"), "{err}");
    let c = tempfile::tempdir().unwrap();
    let back = format!("sqlite://{}", c.path().join("keel.db").display());
    let (ok, out, err) = db_copy(
        c.path(),
        &env(c.path(), back.clone()),
        &["--from", &pg.url, "--to", &back],
    )
    .await;
    assert!(ok, "{out}\n{err}");
    assert!(!c.path().join("keel.db.copying").exists());

    let before = read(&fixture, a.path(), from.clone()).await;
    let b = tempfile::tempdir().unwrap();
    let on_postgres = read(&fixture, b.path(), pg.url.clone()).await;
    assert_eq!(on_postgres, before, "PostgreSQL answers as SQLite did");
    let again = read(&fixture, c.path(), back).await;
    assert_eq!(again, before, "SQLite again answers as it did");
}

/// accounts and svc on `url`, with passkeys and the fake Expo.
fn node_env(dir: &Path, url: &str, expo: &FakeExpo) -> Vec<(&'static str, String)> {
    let mut e = env(dir, url.to_owned());
    e.extend([
        ("KEEL_ACCOUNTS_WEBAUTHN_RP_ID", "localhost".to_owned()),
        (
            "KEEL_ACCOUNTS_WEBAUTHN_ORIGINS",
            "http://localhost:5173".to_owned(),
        ),
        ("KEEL_EXPO_URL", expo.url()),
        ("KEEL_EXPO_RECEIPT_DELAY_SECS", "3600".to_owned()),
        ("KEEL_JOB_POLL_MS", "100".to_owned()),
    ]);
    e
}

async fn post(url: String, body: Value) -> Value {
    let r = reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status();
    let text = r.text().await.unwrap();
    assert!(status.is_success(), "{status}: {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

#[tokio::test]
async fn on_the_target_passwords_passkeys_refresh_tokens_and_a_scheduled_send_work() {
    if !only_on_postgres() {
        return;
    }
    let expo = FakeExpo::start().await;
    let a = tempfile::tempdir().unwrap();
    let from = format!("sqlite://{}", a.path().join("keel.db").display());
    let source = node_env(a.path(), &from, &expo);
    let keel = KeelProcess::serve(command(
        KEEL,
        a.path(),
        &source,
        &["serve", "accounts", "svc"],
    ))
    .await;
    let accounts = keel.url("accounts").to_owned();
    let r = post(
        format!("{accounts}/auth/register"),
        json!({"username": "ada", "email": "ada@example.com", "password": "correct horse battery"}),
    )
    .await;
    let refresh = r["refreshToken"].as_str().unwrap().to_owned();
    let token = r["accessToken"].as_str().unwrap().to_owned();
    let http = reqwest::Client::new();
    let options: Value = http
        .post(format!("{accounts}/account/passkeys/registration"))
        .bearer_auth(&token)
        .json(&json!({"password": "correct horse battery"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let (mut key, credential) = SoftPasskey::create(&options, &Answer::on("http://localhost:5173"));
    let r = http
        .post(format!("{accounts}/account/passkeys"))
        .bearer_auth(&token)
        .json(&json!({"ceremonyId": options["ceremonyId"], "credential": credential}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    // A send due in a few seconds, to three devices: the source stops
    // before its time.
    let p = platform(a.path(), &from).await;
    let password = crate::push_common::seed(&p, 3).await;
    keel_svc::domain::settings::SettingsStore::new(p.db.clone())
        .update(keel_svc::domain::settings::SettingsPatch {
            push_enabled: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let due = chrono::Utc::now() + chrono::Duration::seconds(6);
    let r = http
        .post(format!("{}/send", keel.url("svc")))
        .basic_auth("boss", Some(&password))
        .json(&json!({"title": "Later", "body": "once", "send_at": due.to_rfc3339()}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202, "{}", r.text().await.unwrap_or_default());
    drop(keel);
    p.db.clone().close().await;

    let pg = TestDb::postgres().await;
    // The target from a file, not the command line (`ps` shows that); a
    // password in it (PostgreSQL here trusts loopback) is never printed.
    let secret = "pw-c0ffee-never-printed";
    let to = pg
        .url
        .replacen("://postgres@", &format!("://postgres:{secret}@"), 1);
    let to_file = a.path().join("copy-to");
    std::fs::write(&to_file, format!("{to}&password={secret}\n")).unwrap();
    let mut with_file = source.clone();
    with_file.push(("KEEL_COPY_TO_FILE", to_file.display().to_string()));
    let (ok, out, err) = db_copy(a.path(), &with_file, &[]).await;
    assert!(ok, "{out}\n{err}");
    assert!(
        !out.contains(secret) && !err.contains(secret),
        "{out}\n{err}"
    );
    assert!(err.contains("password=***"), "{err}");
    assert!(expo.delivered().is_empty(), "the source sent nothing");
    let b = tempfile::tempdir().unwrap();
    let target = node_env(b.path(), &pg.url, &expo);
    let keel = KeelProcess::serve(command(
        KEEL,
        b.path(),
        &target,
        &["serve", "accounts", "svc"],
    ))
    .await;
    let accounts = keel.url("accounts").to_owned();
    post(
        format!("{accounts}/auth/login"),
        json!({"login": "ada", "password": "correct horse battery"}),
    )
    .await;
    let r = post(
        format!("{accounts}/auth/refresh"),
        json!({"refreshToken": refresh}),
    )
    .await;
    assert!(r["accessToken"].is_string(), "{r}");
    let options = post(format!("{accounts}/auth/passkey/options"), json!({})).await;
    let answer = key.get(&options, &Answer::on("http://localhost:5173"));
    let r = post(
        format!("{accounts}/auth/passkey"),
        json!({"ceremonyId": options["ceremonyId"], "credential": answer}),
    )
    .await;
    assert!(r["accessToken"].is_string(), "{r}");
    let sent = keel_testkit::eventually(Duration::from_secs(30), || {
        (expo.delivered().len() >= 3).then_some(())
    })
    .await;
    assert!(
        sent.is_some(),
        "the target sent the scheduled send:\n{}",
        keel.stderr()
    );
    let tokens: HashSet<String> = expo.delivered().into_iter().map(|d| d.to).collect();
    assert_eq!(
        (tokens.len(), expo.delivered().len()),
        (3, 3),
        "each device once"
    );
}
