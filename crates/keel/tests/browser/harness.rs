//! The real `keel` binary (channel-web and channel-api) against the fake
//! GetStream and emote sources, for the browser (`chromium.rs`) to visit.

use std::time::Duration;

use keel_testkit::db::TestDb;
use keel_testkit::getstream::Delivery;
use keel_testkit::process::{KeelProcess, command};
use keel_testkit::{FakeEmotes, FakeStream};
use serde_json::{Value, json};

pub use crate::chromium::{Browser, Screen, artifacts};

pub const KEEL: &str = env!("CARGO_BIN_EXE_keel");
pub const EMAIL: &str = "owner@example.com";
pub const PASSWORD: &str = "correct horse battery";
pub const CID: &str = "livestream:channel";
/// How long a test waits for the page to show something.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// keel serving the channel, on a port chosen before it starts (the public
/// URL must name it: mutations are checked against that origin).
pub struct Site {
    pub keel: KeelProcess,
    pub url: String,
    pub stream: FakeStream,
    _emotes: FakeEmotes,
    _db: TestDb,
    _dir: tempfile::TempDir,
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Site {
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let db = TestDb::create(dir.path()).await;
        let stream = FakeStream::start().await;
        let emotes = FakeEmotes::start().await;
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port();
            let url = format!("http://127.0.0.1:{port}");
            let mut env = keel_testkit::offline_env();
            env.extend(stream.env());
            env.extend(emotes.env("12345"));
            env.extend([
                ("KEEL_DATA_DIR", dir.path().display().to_string()),
                ("DATABASE_URL", db.url.clone()),
                ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
                ("KEEL_CHANNEL_WEB_ADDR", format!("127.0.0.1:{port}")),
                ("KEEL_CHANNEL_API_ADDR", "127.0.0.1:0".to_owned()),
                ("KEEL_CHANNEL_PUBLIC_URL", url.clone()),
                ("KEEL_JOB_POLL_MS", "50".to_owned()),
                ("KEEL_CHANNEL_SAMPLER_CRON", "0 0 1 1 *".to_owned()),
            ]);
            let cmd = command(
                KEEL,
                dir.path(),
                &env,
                &["serve", "channel-web", "channel-api"],
            );
            match KeelProcess::try_serve(cmd).await {
                Ok(keel) => {
                    return Self {
                        keel,
                        url,
                        stream,
                        _emotes: emotes,
                        _db: db,
                        _dir: dir,
                    };
                }
                Err(e) => last = e,
            }
        }
        panic!("keel did not start on a free port: {last}");
    }

    pub fn page(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// A signed provider event for our call, to the API's webhook.
    pub async fn webhook(&self, kind: &str, extra: Value) {
        let url = format!("{}/api/webhooks/stream", self.keel.url("channel-api"));
        let event = FakeStream::event(kind, CID, extra);
        let r = self.stream.deliver(&url, &event, Delivery::default()).await;
        assert_eq!(r.status(), 200, "the webhook {kind} was refused");
    }

    /// Sets up the owner and provisions, over HTTP (for tests about what
    /// comes after); the owner's session cookie.
    pub async fn set_up(&self) -> String {
        let cookie = self.set_up_owner().await;
        self.mutate(&cookie, "stream.provision", json!({})).await;
        cookie
    }

    /// The set-up code keel printed in its log at start, and the link it
    /// printed with it.
    pub async fn setup_code(&self) -> (String, String) {
        let line = keel_testkit::eventually(PATIENCE, || {
            self.keel
                .stderr()
                .lines()
                .find(|l| l.contains("set-up code"))
                .map(str::to_owned)
        })
        .await
        .unwrap_or_else(|| panic!("no set-up code in the log:\n{}", self.keel.stderr()));
        let code = line
            .split("(set-up code ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .unwrap_or_else(|| panic!("{line}"))
            .to_owned();
        let link = line
            .split_whitespace()
            .find(|w| w.contains("/setup?code="))
            .unwrap_or_else(|| panic!("{line}"))
            .to_owned();
        (code, link)
    }

    /// Sets up the owner only (not provisioned); the session cookie.
    pub async fn set_up_owner(&self) -> String {
        let (code, _) = self.setup_code().await;
        let http = reqwest::Client::new();
        let r = http
            .post(self.page("/api/trpc/setup.complete"))
            .header("origin", &self.url)
            .json(&json!({"code": code, "email": EMAIL, "password": PASSWORD, "title": "Night Owl Radio", "description": "Lo-fi beats and late-night coding."}))
            .send()
            .await
            .expect("setup.complete");
        assert_eq!(r.status(), 200);
        keel_testkit::session::cookie(r.headers())
    }

    /// Waits until the emote refresh at start has run.
    pub async fn wait_for_emotes(&self) {
        let url = self.page("/api/trpc/emotes.list");
        let got = keel_testkit::eventually_async(PATIENCE, || async {
            let v: Value = reqwest::get(&url).await.ok()?.json().await.ok()?;
            (!v["result"]["data"]["emotes"].as_array()?.is_empty()).then_some(())
        })
        .await;
        assert!(got.is_some(), "the emotes were never fetched");
    }

    /// Calls a mutation as the owner.
    pub async fn mutate(&self, cookie: &str, name: &str, input: Value) -> Value {
        let r = reqwest::Client::new()
            .post(self.page(&format!("/api/trpc/{name}")))
            .header("origin", &self.url)
            .header("cookie", cookie)
            .json(&input)
            .send()
            .await
            .expect("a mutation");
        assert_eq!(r.status(), 200, "{name}");
        r.json().await.unwrap_or_default()
    }

    /// Makes the stream public and has the provider report it live.
    pub async fn go_live(&self, cookie: &str) {
        self.mutate(cookie, "stream.goLive", json!({})).await;
        self.webhook("call.live_started", json!({})).await;
    }
}
