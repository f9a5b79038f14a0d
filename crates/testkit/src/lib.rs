//! keel's test kit: the real app on loopback against a fresh database
//! ([`TestApp`]), fault injection for real dependencies ([`TcpProxy`]), and
//! fakes of third-party services speaking their wire protocols.
#![allow(clippy::expect_used, clippy::panic)]

pub mod apns;
mod app;
pub mod db;
pub mod expo;
pub mod jwks;
mod mail;
mod platform;
pub mod process;
pub mod proxy;
pub mod smtp;

use std::future::Future;
use std::sync::Once;
use std::time::{Duration, Instant};

pub use apns::FakeApns;
pub use app::{TEST_REDIS_VAR, TestApp, TestAppBuilder, redis_url};
pub use expo::FakeExpo;
pub use jwks::FakeJwks;
pub use keel::ServiceName;
pub use mail::{TestMail, read_mails as mail_files};
pub use platform::TestPlatform;
pub use proxy::{Mode, TcpProxy};
pub use smtp::FakeSmtp;

/// Logs to the test's captured output (`RUST_LOG` applies); once.
pub fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        keel_platform::outbound::install_crypto_provider();
        keel_platform::telemetry::init_tracing(keel_platform::config::LogFormat::Text);
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
