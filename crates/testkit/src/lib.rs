//! keel's test kit: the real app on loopback against a fresh database
//! ([`TestApp`]), fault injection for real dependencies ([`TcpProxy`]), and
//! fakes of third-party services speaking their wire protocols.
#![allow(clippy::expect_used, clippy::panic)]

pub mod apns;
mod app;
pub mod authenticator;
pub mod db;
pub mod discord;
pub mod discord_bot;
pub mod emotes;
pub mod encoding;
pub mod expo;
pub mod getstream;
pub mod jwks;
mod mail;
pub mod node;
mod platform;
pub mod process;
pub mod proxy;
pub mod resp;
pub mod scan;
pub mod schemathesis;
pub mod session;
pub mod smtp;

use std::future::Future;
use std::sync::Once;
use std::time::{Duration, Instant};

pub use apns::FakeApns;
pub use app::{TEST_REDIS_VAR, TestApp, TestAppBuilder, redis_env, redis_url};
pub use discord::FakeDiscord;
pub use discord_bot::FakeDiscordBot;
pub use emotes::FakeEmotes;
pub use expo::FakeExpo;
pub use getstream::FakeStream;
pub use jwks::FakeJwks;
pub use mail::{TestMail, read_mails as mail_files};
pub use platform::TestPlatform;
pub use proxy::{Mode, TcpProxy};
pub use resp::Resp;
pub use schemathesis::Schemathesis;
pub use smtp::FakeSmtp;

/// Where `scripts/test` installs the tools the tests drive (schemathesis's
/// virtual environment, the npm packages): `<target dir>/tools`, found from
/// the test binary (`<target dir>/<profile>/deps/<binary>`), so the source
/// tree holds only the repository's own files.
pub fn tools_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .map_or_else(
            || std::path::PathBuf::from("target"),
            std::path::Path::to_path_buf,
        )
        .join("tools")
}

/// Third-party base URLs pointed at a closed local port, so a test never
/// reaches the internet by default (a test that needs a service starts its
/// fake and overrides these).
pub fn offline_env() -> Vec<(&'static str, String)> {
    let closed = "http://127.0.0.1:9".to_owned();
    vec![
        ("KEEL_STREAM_URL", closed.clone()),
        ("KEEL_7TV_URL", closed.clone()),
        ("KEEL_BTTV_URL", closed.clone()),
        ("KEEL_FFZ_URL", closed.clone()),
        ("KEEL_EXPO_URL", closed.clone()),
        ("KEEL_APPCHECK_JWKS_URL", format!("{closed}/jwks")),
        ("KEEL_APPLE_JWKS_URL", format!("{closed}/jwks")),
    ]
}

/// A fake's state lock; a panicked test thread does not poison it for the others.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Serves a fake's router on a free loopback port; its address.
pub(crate) async fn serve_on_loopback(app: axum::Router, what: &str) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind the {what}: {e}"));
    let addr = listener.local_addr().expect("a bound address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

/// Logs to the test's captured output (`RUST_LOG` applies); once.
pub fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        keel_platform::crypto::install_crypto_provider();
        let _ = keel_platform::telemetry::init_tracing(
            &keel_platform::config::Source::default(),
            keel_platform::config::LogFormat::Text,
        );
    });
}

/// Polls `check` until it yields a value or `within` passes.
pub async fn eventually<T>(within: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = check() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Like [`eventually`], with an async check.
/// GET `url` within two seconds: its status and JSON body (`Null` when the
/// body is not JSON); `None` when nothing answered.
pub async fn get_json(url: &str) -> Option<(u16, serde_json::Value)> {
    let r = reqwest::Client::new()
        .get(url)
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .ok()?;
    let status = r.status().as_u16();
    Some((status, r.json().await.unwrap_or(serde_json::Value::Null)))
}

pub async fn eventually_async<T, F, Fut>(within: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Waits until no background job is due or running (at most 30 s).
pub async fn jobs_settled(db: &keel_platform::db::Db) {
    let settled = eventually_async(Duration::from_secs(30), || async {
        let busy = keel_platform::jobs::busy(db).await.ok()?;
        (busy == 0).then_some(())
    })
    .await;
    assert!(settled.is_some(), "background jobs still busy after 30 s");
}

/// Waits until no job is queued at all, scheduled ones included (at most
/// 30 s): each came due and ran, or failed for good.
pub async fn jobs_drained(db: &keel_platform::db::Db) {
    let drained = eventually_async(Duration::from_secs(30), || async {
        let queued = keel_platform::jobs::queued(db).await.ok()?;
        (queued == 0).then_some(())
    })
    .await;
    assert!(drained.is_some(), "background jobs still queued after 30 s");
}
