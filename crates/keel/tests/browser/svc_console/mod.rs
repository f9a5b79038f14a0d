//! svc's admin console in Chromium: an admin signs in with the login
//! `keel svc admin add` printed, composes a push to a subset of the
//! devices with the live recipient count, confirms it, and watches its
//! progress page reach `sent` with the fake Expo's receipts; a scheduled
//! send is cancelled from its page; a wrong password and an admin without
//! svc_manage are told what is wrong. axe-core finds nothing serious on
//! any page, at phone and desktop width. Statistics are drawn as charts;
//! devices are searched; a form is made, submitted to and read; an
//! application password is made and revoked; a push is sent with the
//! keyboard alone.

mod admins;
mod first_time;
mod manage;
mod push;

use std::time::Duration;

use keel_testkit::FakeExpo;
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};

use crate::harness::{Browser, KEEL};

pub struct Console {
    pub keel: KeelProcess,
    pub expo: FakeExpo,
    pub url: String,
    /// The API's base (`.../svc/v1`).
    pub api: String,
    pub password: String,
    pub clerk: String,
    /// An application password of `boss` (for calls the test makes itself).
    pub app_password: String,
    _db: TestDb,
    _dir: tempfile::TempDir,
}

fn env(dir: &std::path::Path, db: &TestDb, expo: &FakeExpo) -> Vec<(&'static str, String)> {
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_SVC_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_JOB_POLL_MS", "50".to_owned()),
        ("KEEL_EXPO_URL", expo.url()),
        ("KEEL_EXPO_RECEIPT_DELAY_SECS", "0".to_owned()),
    ]);
    env
}

/// `keel svc ARGS`' standard output.
async fn svc_cli(dir: &std::path::Path, env: &[(&'static str, String)], args: &[&str]) -> String {
    let mut all = vec!["svc"];
    all.extend_from_slice(args);
    let mut p = KeelProcess::spawn(command(KEEL, dir, env, &all));
    assert!(
        p.wait(Duration::from_secs(60)).await.success(),
        "{}",
        p.stderr()
    );
    p.stdout()
}

/// Six devices, three iOS and three Android, imported as a CSV through the
/// API with an application password.
async fn import_devices(base: &str, app_password: &str) {
    let mut csv = String::from("push_token,device_type,locale,app_version\n");
    for i in 0..6 {
        let kind = if i % 2 == 0 { "ios" } else { "android" };
        csv.push_str(&format!(
            "ExponentPushToken[console{i:04}],{kind},en-US,1.0.0\n"
        ));
    }
    let part = reqwest::multipart::Part::bytes(csv.into_bytes())
        .file_name("devices.csv")
        .mime_str("text/csv")
        .unwrap();
    let r = reqwest::Client::new()
        .post(format!("{base}/devices/import"))
        .basic_auth("boss", Some(app_password))
        .multipart(reqwest::multipart::Form::new().part("file", part))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
}

impl Console {
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = TestDb::create(dir.path()).await;
        let expo = FakeExpo::start().await;
        let env = env(dir.path(), &db, &expo);
        let out = svc_cli(
            dir.path(),
            &env,
            &["admin", "add", "boss", "--manage-admins"],
        )
        .await;
        let password = out.trim().rsplit(": ").next().unwrap().to_owned();
        let out = svc_cli(
            dir.path(),
            &env,
            &["admin", "add", "clerk", "--no-capability"],
        )
        .await;
        let clerk = out.trim().rsplit(": ").next().unwrap().to_owned();
        let out = svc_cli(dir.path(), &env, &["app-password", "add", "boss", "seed"]).await;
        let app_password = out.trim().rsplit(": ").next().unwrap().to_owned();
        let keel = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
        let api = keel.url("svc").to_owned();
        import_devices(&api, &app_password).await;
        let url = format!("{}/admin/", api.trim_end_matches("/v1"));
        Self {
            keel,
            expo,
            url,
            api,
            password,
            clerk,
            app_password,
            _db: db,
            _dir: dir,
        }
    }

    /// Ends `user`'s sessions from the command line, as another operator
    /// would (`keel svc admin end-sessions`).
    pub async fn end_sessions(&self, user: &str) {
        let env = env(self._dir.path(), &self._db, &self.expo);
        svc_cli(self._dir.path(), &env, &["admin", "end-sessions", user]).await;
    }

    pub async fn sign_in(&self, b: &Browser, user: &str, password: &str) {
        b.goto(&self.url).await;
        b.wait_text("h1", "Sign in").await;
        b.fill("#username", user).await;
        b.fill("#password", password).await;
        b.click("#sign-in button[type=submit]").await;
    }
}

pub async fn clean(b: &Browser, page: &str) {
    let problems = b.accessibility_problems().await;
    assert!(problems.is_empty(), "{page}: {problems:#?}");
}
