//! `TestApp`: the real services, started in-process on 127.0.0.1:0 against
//! a fresh database and a temporary data directory.

use std::collections::BTreeMap;
use std::time::Duration;

use keel::Running;
use keel_platform::Platform;
use keel_platform::config::Source;
use tempfile::TempDir;

use crate::db::TestDb;
use crate::mail::{TestMail, read_mails};

/// Where tests find Redis (default `redis://127.0.0.1:6379`).
pub const TEST_REDIS_VAR: &str = "KEEL_TEST_REDIS_URL";

pub fn redis_url() -> String {
    std::env::var(TEST_REDIS_VAR).unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

/// `REDIS_URL` for the test Redis and a key prefix of the caller's own.
pub fn redis_env() -> [(&'static str, String); 2] {
    [
        ("REDIS_URL", redis_url()),
        (
            "KEEL_REDIS_PREFIX",
            format!("keel-test:{}:", uuid::Uuid::new_v4().simple()),
        ),
    ]
}

pub struct TestAppBuilder {
    services: Vec<&'static str>,
    env: BTreeMap<String, String>,
}

impl TestAppBuilder {
    /// Starts only these services, by name (default: all).
    #[must_use]
    pub fn service(mut self, s: &'static str) -> Self {
        self.services.push(s);
        self
    }

    /// Sets a configuration variable.
    #[must_use]
    pub fn env(mut self, key: &str, value: impl Into<String>) -> Self {
        self.env.insert(key.to_owned(), value.into());
        self
    }

    /// Sets each `(variable, value)`.
    #[must_use]
    pub fn envs<K: AsRef<str>, V: Into<String>>(
        self,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        pairs
            .into_iter()
            .fold(self, |b, (k, v)| b.env(k.as_ref(), v))
    }

    /// Uses the test Redis, under a key prefix of this test's own.
    #[must_use]
    pub fn redis(self) -> Self {
        redis_env().into_iter().fold(self, |b, (k, v)| b.env(k, v))
    }

    pub async fn spawn(self) -> TestApp {
        crate::init();
        let data_dir = tempfile::tempdir().expect("create a temporary data directory");
        let db = TestDb::create(data_dir.path()).await;
        let mut source = Source::from_pairs([
            ("KEEL_DATA_DIR", data_dir.path().display().to_string()),
            ("DATABASE_URL", db.url.clone()),
            ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
            ("KEEL_JOB_POLL_MS", "50".to_owned()),
            ("KEEL_JOB_RETRY_BASE_MS", "100".to_owned()),
            ("KEEL_SHUTDOWN_GRACE_SECS", "5".to_owned()),
            // A test that stops the app does not wait out a drain (those
            // that test the drain set it).
            ("KEEL_SHUTDOWN_DRAIN_SECS", "0".to_owned()),
            ("KEEL_JWKS_REFETCH_COOLDOWN_SECS", "0".to_owned()),
        ]);
        for (k, v) in crate::offline_env() {
            source.set(k, v);
        }
        for l in keel::services::http().map(|s| s.listener) {
            source.set(l.var, "127.0.0.1:0");
        }
        for (k, v) in self.env {
            source.set(k, v);
        }
        let running = keel::start(&source, &self.services)
            .await
            .unwrap_or_else(|e| panic!("the app failed to start: {e}"));
        TestApp {
            running: Some(running),
            source,
            services: self.services,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("build the test client"),
            db,
            data_dir,
        }
    }
}

/// A running app for one test. Dropping it stops the app and drops its
/// database.
pub struct TestApp {
    running: Option<Running>,
    source: Source,
    services: Vec<&'static str>,
    pub http: reqwest::Client,
    // Field order matters: the app stops before its database goes.
    db: TestDb,
    data_dir: TempDir,
}

impl TestApp {
    pub fn builder() -> TestAppBuilder {
        TestAppBuilder {
            services: Vec::new(),
            env: BTreeMap::new(),
        }
    }

    /// Every service, default settings.
    pub async fn spawn() -> Self {
        Self::builder().spawn().await
    }

    /// The running process, for a test of how it stops.
    pub fn running_for_tests(&self) -> &Running {
        self.running()
    }

    fn running(&self) -> &Running {
        self.running.as_ref().expect("the app is running")
    }

    /// `base URL of service` + `path`.
    pub fn url(&self, service: &str, path: &str) -> String {
        let base = self
            .running()
            .url(service)
            .unwrap_or_else(|| panic!("{service} is not running"));
        format!("{base}{path}")
    }

    /// The service's listener root (no base path), for `/healthz` and such.
    pub fn root(&self, service: &str, path: &str) -> String {
        let addr = self
            .running()
            .listening
            .iter()
            .find(|l| l.service == service)
            .map(|l| l.addr)
            .unwrap_or_else(|| panic!("{service} is not running"));
        format!("http://{addr}{path}")
    }

    pub fn metrics_url(&self) -> String {
        format!("http://{}/metrics", self.running().metrics_addr)
    }

    /// The Prometheus text the metrics listener serves now.
    pub async fn metrics(&self) -> String {
        let resp = self.http.get(self.metrics_url()).send().await;
        let resp = resp.unwrap_or_else(|e| panic!("GET /metrics: {e}"));
        resp.text()
            .await
            .unwrap_or_else(|e| panic!("GET /metrics body: {e}"))
    }

    pub fn platform(&self) -> &Platform {
        &self.running().platform
    }

    pub fn data_dir(&self) -> &std::path::Path {
        self.data_dir.path()
    }

    pub fn is_postgres(&self) -> bool {
        self.db.is_postgres()
    }

    /// The configuration the app was started with.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Stops as the binary does on SIGTERM (the drain, then the
    /// shutdown) and waits until everything has stopped.
    pub async fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop();
            if let Err(e) = running.wait().await {
                panic!("the app stopped with an error: {e}");
            }
        }
    }

    /// Stops and starts again on the same database and data directory
    /// (new ports).
    pub async fn restart(&mut self) {
        self.stop().await;
        let running = keel::start(&self.source, &self.services)
            .await
            .unwrap_or_else(|e| panic!("the app failed to restart: {e}"));
        self.running = Some(running);
    }

    /// Waits until no background job is due or running: what the requests
    /// so far set in motion has run (jobs scheduled for later excepted).
    pub async fn jobs_settled(&self) {
        crate::jobs_settled(&self.platform().db).await;
    }

    /// Waits until no background job is left at all, scheduled ones
    /// included: they came due and ran.
    pub async fn jobs_drained(&self) {
        crate::jobs_drained(&self.platform().db).await;
    }

    /// The messages delivered to the mail directory so far.
    pub fn mails(&self) -> Vec<TestMail> {
        read_mails(&self.data_dir.path().join("mail"))
    }

    /// Waits until at least `n` messages were delivered.
    pub async fn wait_for_mails(&self, n: usize) -> Vec<TestMail> {
        crate::eventually(Duration::from_secs(10), || {
            let mails = self.mails();
            (mails.len() >= n).then_some(mails)
        })
        .await
        .unwrap_or_else(|| panic!("expected {n} mails, got {}", self.mails().len()))
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(running) = &self.running {
            running.shutdown();
        }
    }
}
