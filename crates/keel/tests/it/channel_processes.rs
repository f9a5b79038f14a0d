//! The channel across processes: the operator's CLI, cron ticks claimed
//! once by two processes on one database, and a live notification that
//! survives a SIGKILL between the webhook and the post.

use std::time::Duration;

use keel_channel::entity::{stream_session, viewer_sample};
use keel_platform::sea_orm::{EntityTrait, PaginatorTrait};
use keel_testkit::db::TestDb;
use keel_testkit::getstream::Delivery;
use keel_testkit::process::{KeelProcess, command};
use keel_testkit::{FakeDiscord, FakeStream};
use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::KEEL;
use crate::process::platform_on;

const ORIGIN: &str = "http://127.0.0.1:8083";
pub const SETUP_CODE: &str = "test-setup-code";

pub fn env_for(
    db: &TestDb,
    dir: &std::path::Path,
    stream: &FakeStream,
    extra: &[(&'static str, String)],
) -> Vec<(&'static str, String)> {
    let mut env = keel_testkit::offline_env();
    env.extend(stream.env());
    env.extend([
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_CHANNEL_API_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_CHANNEL_PUBLIC_URL", ORIGIN.to_owned()),
        ("KEEL_JOB_POLL_MS", "50".to_owned()),
        ("KEEL_JOB_RETRY_BASE_MS", "100".to_owned()),
        ("KEEL_JOB_LEASE_SECS", "2".to_owned()),
        ("KEEL_CHANNEL_EMOTE_CRON", "0 0 1 1 *".to_owned()),
        ("KEEL_CHANNEL_SAMPLER_CRON", "0 0 1 1 *".to_owned()),
        ("KEEL_CHANNEL_SETUP_CODE", SETUP_CODE.to_owned()),
    ]);
    env.extend(extra.iter().cloned());
    env
}

async fn call(base: &str, name: &str, cookie: Option<&str>, input: Value) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/api/trpc/{name}"))
        .header("origin", ORIGIN)
        .json(&input);
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    req.send().await.unwrap()
}

/// Sets up, signs in and provisions through `base`.
pub async fn provision(base: &str) {
    let r = call(
        base,
        "setup.complete",
        None,
        json!({"code": SETUP_CODE, "email": "o@example.com", "password": "correct horse battery", "title": "T"}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let cookie = keel_testkit::session::cookie(r.headers());
    let r = call(base, "stream.provision", Some(&cookie), json!({})).await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
}

#[tokio::test]
async fn the_cli_sets_the_owner_who_then_signs_in() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let stream = FakeStream::start().await;
    let env = env_for(&db, dir.path(), &stream, &[]);
    let mut p = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &env,
        &["channel", "owner", "set", "--email", "Ops@Example.com"],
    ));
    assert!(
        p.wait(Duration::from_secs(30)).await.success(),
        "{}",
        p.stderr()
    );
    let out = p.stdout();
    let password = out.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(
        out.contains("owner ops@example.com set; password (shown once): "),
        "{out}"
    );
    let keel = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "channel-api"])).await;
    let r = reqwest::Client::new()
        .post(format!("{}/api/auth/sign-in", keel.url("channel-api")))
        .json(&json!({"email": "ops@example.com", "password": password}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let status: Value = reqwest::get(format!("{}/api/trpc/setup.status", keel.url("channel-api")))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status["result"]["data"]["needsSetup"], false);
    let bad = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &env,
        &["channel", "owner", "set", "--email", "not-an-email"],
    ));
    let mut bad = bad;
    assert!(!bad.wait(Duration::from_secs(30)).await.success());
    assert!(bad.stderr().contains("--email"), "{}", bad.stderr());
}

#[tokio::test]
async fn two_processes_run_each_sampler_tick_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let stream = FakeStream::start().await;
    let every_second = [("KEEL_CHANNEL_SAMPLER_CRON", "* * * * * *".to_owned())];
    let env = env_for(&db, dir.path(), &stream, &every_second);
    let mut a =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "channel-api"])).await;
    let mut b =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "channel-api"])).await;
    provision(a.url("channel-api")).await;
    let base = a.url("channel-api").to_owned();
    stream.set_viewers(&[("viewer", 4)], 0);
    let e = FakeStream::event("call.live_started", "livestream:channel", json!({}));
    let r = stream
        .deliver(
            &format!("{base}/api/webhooks/stream"),
            &e,
            Delivery::default(),
        )
        .await;
    assert_eq!(r.status(), 200);
    let platform = platform_on(&db, dir.path()).await;
    let samples = keel_testkit::eventually_async(Duration::from_secs(20), || async {
        let n = viewer_sample::Entity::find()
            .count(platform.db.read())
            .await
            .unwrap();
        (n >= 4).then_some(n)
    })
    .await;
    assert!(samples.is_some(), "a:\n{}\nb:\n{}", a.stderr(), b.stderr());
    a.kill().await;
    b.kill().await;
    let samples = viewer_sample::Entity::find()
        .count(platform.db.read())
        .await
        .unwrap();
    let gets = stream
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path == "/api/v2/video/call/livestream/channel")
        .count();
    assert_eq!(
        u64::try_from(gets).unwrap(),
        samples,
        "one provider read per tick: no tick ran on both processes"
    );
}

#[tokio::test]
async fn a_live_notification_survives_a_kill_between_the_webhook_and_the_post() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let stream = FakeStream::start().await;
    let discord = FakeDiscord::start().await;
    let extra = [
        ("KEEL_CHANNEL_LIVE_WEBHOOK_URL", discord.webhook_url()),
        // Due a moment after the start: the kill lands before it runs.
        ("KEEL_CHANNEL_LIVE_NOTIFY_DELAY_SECS", "2".to_owned()),
    ];
    let env = env_for(&db, dir.path(), &stream, &extra);
    let mut first =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "channel-api"])).await;
    provision(first.url("channel-api")).await;
    let e = FakeStream::event("call.live_started", "livestream:channel", json!({}));
    let url = format!("{}/api/webhooks/stream", first.url("channel-api"));
    assert_eq!(
        stream.deliver(&url, &e, Delivery::default()).await.status(),
        200
    );
    first.signal(Signal::SIGKILL);
    first.wait(Duration::from_secs(10)).await;
    assert!(discord.posted().is_empty(), "not yet due when killed");

    let second =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "channel-api"])).await;
    // The provider redelivers the start to the new process.
    let url = format!("{}/api/webhooks/stream", second.url("channel-api"));
    assert_eq!(
        stream.deliver(&url, &e, Delivery::default()).await.status(),
        200
    );
    let posted = keel_testkit::eventually(Duration::from_secs(20), || {
        let p = discord.posted();
        (!p.is_empty()).then_some(p)
    })
    .await;
    assert!(
        posted.is_some(),
        "the notification went out after the restart: {}",
        second.stderr()
    );
    let platform = platform_on(&db, dir.path()).await;
    keel_testkit::jobs_drained(&platform.db).await;
    assert_eq!(discord.posted().len(), 1, "exactly once");
    assert_eq!(
        stream_session::Entity::find()
            .count(platform.db.read())
            .await
            .unwrap(),
        1
    );
}

/// The set-up code a process printed in its log.
async fn printed_code(p: &KeelProcess) -> String {
    keel_testkit::eventually(Duration::from_secs(20), || {
        let log = p.stderr();
        let line = log.lines().find(|l| l.contains("(set-up code "))?;
        Some(
            line.split("(set-up code ")
                .nth(1)?
                .split(')')
                .next()?
                .to_owned(),
        )
    })
    .await
    .unwrap_or_else(|| panic!("no set-up code printed:\n{}", p.stderr()))
}

#[tokio::test]
async fn a_fresh_channel_prints_a_set_up_code_any_node_takes_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let stream = FakeStream::start().await;
    let unset = [("KEEL_CHANNEL_SETUP_CODE", String::new())];
    let env = env_for(&db, dir.path(), &stream, &unset);
    let a = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "channel-api"])).await;
    let b = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "channel-api"])).await;
    let code = printed_code(&a).await;
    assert_eq!(code.len(), 14, "{code}");
    assert!(a.stderr().contains(&format!("{ORIGIN}/setup?code={code}")));
    let body = |code: &str| json!({"code": code, "email": "o@example.com", "password": "correct horse battery", "title": "T"});
    // B's own code is another; A's works at B.
    assert_ne!(printed_code(&b).await, code);
    let r = call(b.url("channel-api"), "setup.complete", None, body(&code)).await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let r = call(a.url("channel-api"), "setup.complete", None, body(&code)).await;
    assert_eq!(r.status(), 409, "set up once");
    let platform = platform_on(&db, dir.path()).await;
    assert_eq!(
        keel_channel::entity::setup_code::Entity::find()
            .count(platform.db.read())
            .await
            .unwrap(),
        0,
        "the codes are gone with the set-up"
    );
    let c = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "channel-api"])).await;
    let ready = format!("{}/readyz", c.url("channel-api"));
    assert_eq!(reqwest::get(&ready).await.unwrap().status(), 200);
    assert!(!c.stderr().contains("set-up code"), "{}", c.stderr());
}
