//! Credentials stay out of logs and stored job errors when the service
//! that holds them fails: outbound errors name the host, never the URL.

use std::time::Duration;

use keel_platform::jobs::entity as job;
use keel_platform::mail::{self, Mail};
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use keel_testkit::db::TestDb;
use keel_testkit::getstream::{API_KEY, Delivery};
use keel_testkit::process::{KeelProcess, command};
use keel_testkit::{FakeStream, TcpProxy};
use serde_json::json;

use crate::KEEL;
use crate::channel_processes::{env_for, provision};
use crate::process::platform_on;

const WEBHOOK_TOKEN: &str = "webhook-token-c0ffee-never-logged";
const SMTP_PASSWORD: &str = "smtp-password-c0ffee-never-logged";

/// Every job's stored error, after every job has failed at least once.
async fn job_errors(platform: &keel_platform::Platform, kinds: &[&str]) -> String {
    keel_testkit::eventually_async(Duration::from_secs(30), || async {
        let jobs = job::Entity::find()
            .filter(job::Column::Kind.is_in(kinds.iter().copied()))
            .all(platform.db.read())
            .await
            .unwrap();
        let failed: Vec<_> = jobs.iter().filter_map(|j| j.last_error.clone()).collect();
        let every_kind = kinds
            .iter()
            .all(|k| jobs.iter().any(|j| j.kind == *k && j.last_error.is_some()));
        every_kind.then(|| {
            jobs.iter()
                .map(|j| format!("{} {}", j.payload, j.unique_key.clone().unwrap_or_default()))
                .chain(failed)
                .collect::<Vec<_>>()
                .join("\n")
        })
    })
    .await
    .unwrap_or_else(|| panic!("not every job of {kinds:?} failed within 30 s"))
}

#[tokio::test]
async fn no_credential_reaches_the_log_or_a_stored_job_error_when_its_service_fails() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let stream = FakeStream::start().await;
    let stream_proxy = TcpProxy::start(stream.addr).await;
    let extra = [
        ("KEEL_STREAM_URL", format!("http://{}", stream_proxy.addr)),
        // Nothing listens on port 9: every call fails at connect.
        (
            "KEEL_CHANNEL_LIVE_WEBHOOK_URL",
            format!("http://127.0.0.1:9/api/webhooks/1234/{WEBHOOK_TOKEN}"),
        ),
        (
            "KEEL_SMTP_URL",
            format!("smtp://keel:{SMTP_PASSWORD}@127.0.0.1:9"),
        ),
        ("KEEL_CHANNEL_SAMPLER_CRON", "* * * * * *".to_owned()),
    ];
    let env = env_for(&db, dir.path(), &stream, &extra);
    let keel = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "channel-api"])).await;
    let base = keel.url("channel-api").to_owned();
    provision(&base).await;
    let e = FakeStream::event("call.live_started", "livestream:channel", json!({}));
    let r = stream
        .deliver(
            &format!("{base}/api/webhooks/stream"),
            &e,
            Delivery::default(),
        )
        .await;
    assert_eq!(r.status(), 200);
    // The provider goes away: the sampler's call to it fails, with the
    // api_key in the request's query.
    stream_proxy.go_down();
    let platform = platform_on(&db, dir.path()).await;
    mail::enqueue(
        platform.db.write(),
        Mail {
            to: "someone@example.com".to_owned(),
            subject: "hello".to_owned(),
            text: "a mail the SMTP server never takes".to_owned(),
            ..Mail::default()
        },
    )
    .await
    .unwrap();
    let stored = job_errors(
        &platform,
        &[
            "channel.live_notify",
            "channel.sample_viewers",
            "platform.mail",
        ],
    )
    .await;
    let log = keel.stderr();
    for (what, secret) in [
        ("the Discord webhook token", WEBHOOK_TOKEN),
        ("the SMTP password", SMTP_PASSWORD),
        ("GetStream's api_key", API_KEY),
    ] {
        assert!(!log.contains(secret), "{what} is in the log:\n{log}");
        assert!(
            !stored.contains(secret),
            "{what} is in a job's error:\n{stored}"
        );
    }
    // The failures themselves are there, naming the host.
    assert!(stored.contains("127.0.0.1:9"), "{stored}");
    assert!(log.contains("127.0.0.1:9"), "{log}");
}
