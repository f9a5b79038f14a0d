//! A stack for fault tests: a database of the run's backend, the fakes of
//! every provider, and `keel serve` processes started on them.

use std::path::Path;

use keel_platform::Platform;
use keel_platform::config::{PlatformConfig, Source};
use keel_svc::domain::settings::{SettingsPatch, SettingsStore};
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use keel_testkit::{FakeDiscord, FakeExpo, FakeJwks, FakeStream};
use serde_json::{Value, json};

use crate::KEEL;

pub const ORIGIN: &str = "http://127.0.0.1:8083";
pub const SETUP_CODE: &str = "fault-suite-code";
pub const PROJECT: &str = "123456789";
pub const APP_ID: &str = "1:123456789:ios:abcdef";
pub const FORM: &str = "12:3";

pub struct Stack {
    pub dir: tempfile::TempDir,
    pub db: TestDb,
    pub jwks: FakeJwks,
    pub stream: FakeStream,
    pub discord: FakeDiscord,
    pub expo: FakeExpo,
}

impl Stack {
    /// The fakes, and a fresh database of this run's backend.
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = TestDb::create(dir.path()).await;
        Self::on(dir, db).await
    }

    async fn on(dir: tempfile::TempDir, db: TestDb) -> Self {
        Self {
            dir,
            db,
            jwks: FakeJwks::start().await,
            stream: FakeStream::start().await,
            discord: FakeDiscord::start().await,
            expo: FakeExpo::start().await,
        }
    }

    /// The environment of a node: every listener on a free port, the
    /// fakes, fast job polling, and `extra` last (it wins).
    pub fn env(&self, extra: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
        let mut env = keel_testkit::offline_env();
        env.extend(self.stream.env());
        for l in keel::services::http().map(|s| s.listener) {
            env.push((l.var, "127.0.0.1:0".to_owned()));
        }
        env.extend([
            ("KEEL_DATA_DIR", self.dir.path().display().to_string()),
            ("DATABASE_URL", self.db.url.clone()),
            ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
            ("KEEL_JOB_POLL_MS", "50".to_owned()),
            ("KEEL_JOB_RETRY_BASE_MS", "100".to_owned()),
            ("KEEL_DB_ACQUIRE_TIMEOUT_SECS", "2".to_owned()),
            ("KEEL_CHANNEL_PUBLIC_URL", ORIGIN.to_owned()),
            ("KEEL_CHANNEL_SETUP_CODE", SETUP_CODE.to_owned()),
            ("KEEL_CHANNEL_LIVE_WEBHOOK_URL", self.discord.webhook_url()),
            ("KEEL_CHANNEL_EMOTE_CRON", "0 0 1 1 *".to_owned()),
            ("KEEL_CHANNEL_SAMPLER_CRON", "0 0 1 1 *".to_owned()),
            ("KEEL_APPCHECK_JWKS_URL", self.jwks.url()),
            ("KEEL_EXPO_URL", self.expo.url()),
            ("KEEL_EXPO_RECEIPT_DELAY_SECS", "0".to_owned()),
        ]);
        env.extend(extra.iter().cloned());
        env
    }

    /// `keel serve <services>` with [`Self::env`].
    pub async fn serve(&self, services: &[&str], extra: &[(&'static str, String)]) -> KeelProcess {
        let mut args = vec!["serve"];
        args.extend_from_slice(services);
        KeelProcess::serve(command(KEEL, self.dir.path(), &self.env(extra), &args)).await
    }

    /// The database, straight (not through any proxy a test put between
    /// it and keel).
    pub async fn platform(&self) -> Platform {
        platform_on(&self.db, self.dir.path()).await
    }

    /// svc ready for submissions and registrations: App Check, the form
    /// allow-listed and defined, push on, no practical rate limit.
    pub async fn prepare_svc(&self) {
        let p = self.platform().await;
        SettingsStore::new(p.db.clone())
            .update(SettingsPatch {
                appcheck_project_number: Some(PROJECT.into()),
                appcheck_app_ids: Some(vec![APP_ID.into()]),
                forms_allowlist: Some(vec![FORM.into()]),
                push_enabled: Some(true),
                submission_rate_limit: Some(1_000_000),
                ..Default::default()
            })
            .await
            .unwrap();
        let form = json!({
            "id": FORM, "title": "Contact",
            "fields": [{"id": "name", "label": "Name", "type": "text", "required": true, "max_length": 80}]
        });
        keel_svc::domain::site::put_form(&p.db, &serde_json::from_value(form).unwrap())
            .await
            .unwrap();
    }

    /// An App Check token for svc.
    pub fn appcheck(&self) -> String {
        let now = chrono::Utc::now().timestamp();
        self.jwks.sign(
            "k1",
            &json!({
                "iss": format!("https://firebaseappcheck.googleapis.com/{PROJECT}"),
                "aud": [format!("projects/{PROJECT}")],
                "sub": APP_ID, "iat": now, "exp": now + 3600,
            }),
        )
    }
}

pub async fn platform_on(db: &TestDb, dir: &Path) -> Platform {
    platform_at(dir, &db.url).await
}

/// The platform on the database at `url`.
pub async fn platform_at(dir: impl AsRef<Path>, url: &str) -> Platform {
    let src = Source::from_pairs([
        ("KEEL_DATA_DIR", dir.as_ref().display().to_string()),
        ("DATABASE_URL", url.to_owned()),
    ]);
    Platform::connect(PlatformConfig::from_source(&src).unwrap())
        .await
        .unwrap()
}

/// Registers an accounts user; its bearer token.
pub async fn account(base: &str, name: &str) -> String {
    let r: Value = reqwest::Client::new()
        .post(format!("{base}/auth/register"))
        .form(&[
            ("username", name),
            ("email", &format!("{name}@example.com")),
            ("password", "correct horse battery"),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    r["accessToken"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {r}"))
        .to_owned()
}

/// Sets the channel up through `base` and provisions it; the owner's
/// cookie.
pub async fn channel_owner(base: &str) -> String {
    let http = reqwest::Client::new();
    let r = http
        .post(format!("{base}/api/trpc/setup.complete"))
        .header("origin", ORIGIN)
        .json(&json!({"code": SETUP_CODE, "email": "o@example.com", "password": "correct horse battery", "title": "T"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "setup.complete");
    let cookie = keel_testkit::session::cookie(r.headers());
    let r = http
        .post(format!("{base}/api/trpc/stream.provision"))
        .header("origin", ORIGIN)
        .header("cookie", &cookie)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "stream.provision");
    cookie
}

/// The server a `postgres://` URL names.
pub fn postgres_addr(url: &str) -> std::net::SocketAddr {
    let hostport = host_port(url);
    let upstream = if hostport.contains(':') {
        hostport.to_owned()
    } else {
        format!("{hostport}:5432")
    };
    std::net::ToSocketAddrs::to_socket_addrs(&upstream)
        .unwrap()
        .next()
        .unwrap()
}

/// The URL, pointed at `via` instead of its server.
pub fn postgres_through(url: &str, via: std::net::SocketAddr) -> String {
    url.replacen(host_port(url), &via.to_string(), 1)
}

fn host_port(url: &str) -> &str {
    let after = url.split_once('@').map_or(url, |(_, a)| a);
    after.split(['/', '?']).next().unwrap()
}
