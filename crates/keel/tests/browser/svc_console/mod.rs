//! svc's part of the operator console in Chromium: an operator with the
//! push and forms roles signs in with the password and TOTP secret
//! `keel operator add` printed, composes a push to a subset of the
//! devices with the live recipient count, confirms it, and watches its
//! progress page reach `sent` with the fake Expo's receipts; a scheduled
//! send is cancelled from its page; a wrong password and an operator
//! without the push role are told what is wrong. axe-core finds nothing
//! serious on any page, at phone and desktop width. Statistics are drawn
//! as charts; devices are searched; a form is made, submitted to and
//! read; svc's own admins are managed; a push is sent with the keyboard
//! alone. svc's API, called as scripts call it, is unchanged beside.

mod admins;
mod first_time;
mod manage;
mod push;

use std::time::Duration;

use keel_platform::totp;
use keel_testkit::FakeExpo;
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, add_operator, command};

use crate::harness::{Browser, KEEL};

pub struct Console {
    pub keel: KeelProcess,
    pub expo: FakeExpo,
    /// The operator console's page.
    pub url: String,
    /// svc's API base (`.../svc/v1`), as scripts call it.
    pub api: String,
    /// The password of the operators `boss` (push, forms and operators)
    /// and `clerk` (jobs only).
    pub password: String,
    pub clerk: String,
    /// An application password of svc's admin `boss` (for calls the test
    /// makes itself, as a script would).
    pub app_password: String,
    secrets: Vec<(String, Vec<u8>)>,
    /// Each operator's last step used.
    used_steps: tokio::sync::Mutex<std::collections::HashMap<String, u64>>,
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
        ("KEEL_CONSOLE_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_JOB_POLL_MS", "50".to_owned()),
        ("KEEL_EXPO_URL", expo.url()),
        ("KEEL_EXPO_RECEIPT_DELAY_SECS", "0".to_owned()),
    ]);
    env
}

/// `keel ARGS`' standard output.
async fn cli(dir: &std::path::Path, env: &[(&'static str, String)], args: &[&str]) -> String {
    let mut p = KeelProcess::spawn(command(KEEL, dir, env, args));
    assert!(
        p.wait(Duration::from_secs(60)).await.success(),
        "{}",
        p.stderr()
    );
    p.stdout()
}

/// Six devices, three iOS and three Android, imported as a CSV through
/// svc's API with an application password, as a script does.
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
        let boss = add_operator(
            KEEL,
            dir.path(),
            &env,
            "boss",
            &["push", "forms", "operators"],
        )
        .await;
        let clerk = add_operator(KEEL, dir.path(), &env, "clerk", &["jobs"]).await;
        cli(dir.path(), &env, &["svc", "admin", "add", "boss"]).await;
        cli(
            dir.path(),
            &env,
            &["svc", "admin", "add", "clerk", "--no-capability"],
        )
        .await;
        let out = cli(
            dir.path(),
            &env,
            &["svc", "app-password", "add", "boss", "seed"],
        )
        .await;
        let app_password = out.trim().rsplit(": ").next().unwrap().to_owned();
        let keel = KeelProcess::serve(command(
            KEEL,
            dir.path(),
            &env,
            &["serve", "svc", "console"],
        ))
        .await;
        let api = keel.url("svc").to_owned();
        import_devices(&api, &app_password).await;
        let url = format!("{}/", keel.url("console").trim_end_matches('/'));
        Self {
            keel,
            expo,
            url,
            api,
            password: boss.password,
            clerk: clerk.password,
            app_password,
            secrets: vec![
                ("boss".to_owned(), boss.secret),
                ("clerk".to_owned(), clerk.secret),
            ],
            used_steps: Default::default(),
            _db: db,
            _dir: dir,
        }
    }

    /// Ends `name`'s console sessions from the command line, as another
    /// operator would (`keel operator end-sessions`).
    pub async fn end_sessions(&self, name: &str) {
        let env = env(self._dir.path(), &self._db, &self.expo);
        cli(self._dir.path(), &env, &["operator", "end-sessions", name]).await;
    }

    /// A code of `name`'s authenticator app that has not been used: the
    /// console takes a step's code once, from the step before its now to
    /// the one after. The code is of this step or the next, never the one
    /// before (the clock may reach the next step before the console reads
    /// it), so a test that signs in again and again waits, at times, for
    /// the clock to reach a fresh step.
    pub async fn code(&self, name: &str) -> String {
        let (_, secret) = (self.secrets.iter())
            .find(|(n, _)| n == name)
            .expect("an operator of the test");
        let mut used = self.used_steps.lock().await;
        let last = used.get(name).copied().unwrap_or(0);
        let step = keel_testkit::eventually_async(Duration::from_secs(65), || async {
            let now = u64::try_from(chrono::Utc::now().timestamp()).unwrap() / 30;
            let step = now.max(last + 1);
            (step <= now + 1).then_some(step)
        })
        .await
        .expect("the clock moves on");
        used.insert(name.to_owned(), step);
        totp::code_at(secret, step * 30).unwrap()
    }

    /// Signs `name` in with `password` and the current code, landing on
    /// the sends.
    pub async fn sign_in(&self, b: &Browser, name: &str, password: &str) {
        b.goto(&format!("{}#/sends", self.url)).await;
        b.wait_text("h1", "Sign in").await;
        b.fill("#name", name).await;
        b.fill("#password", password).await;
        b.fill("#code", &self.code(name).await).await;
        b.click("#sign-in button[type=submit]").await;
    }
}

pub async fn clean(b: &Browser, page: &str) {
    let problems = b.accessibility_problems().await;
    assert!(problems.is_empty(), "{page}: {problems:#?}");
}
