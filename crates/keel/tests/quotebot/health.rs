//! The health listener: liveness without dependencies, readiness naming
//! what is down and recovering by itself.

use std::net::SocketAddr;
use std::time::Duration;

use keel_testkit::{TcpProxy, eventually_async};
use serde_json::Value;

use crate::harness::Quotebot;

async fn get(url: &str) -> (u16, Value) {
    let r = reqwest::get(url).await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

fn port_of(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap()
}

#[tokio::test]
async fn readiness_names_what_is_down_and_recovers_while_liveness_stays_up() {
    let mut q = Quotebot::new().await;
    let redis_addr: SocketAddr = keel_testkit::redis_url()
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let redis = TcpProxy::start(redis_addr).await;
    // The database's host:port, whatever URL this run was given.
    let hostport =
        q.db.url
            .split_once('@')
            .and_then(|(_, rest)| rest.split(['/', '?']).next())
            .unwrap()
            .to_owned();
    let upstream = tokio::net::lookup_host(hostport.as_str())
        .await
        .unwrap()
        .next()
        .unwrap();
    let pg = TcpProxy::start(upstream).await;
    q.set("REDIS_URL", format!("redis://{}", redis.addr));
    let db_url = q.db.url.replacen(&hostport, &pg.addr.to_string(), 1);
    q.set("DATABASE_URL", db_url);
    let bot = q.start(1).await;
    let live = bot.health.replace("/api/health", "/api/health/live");
    let (status, body) = get(&bot.health).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "ok");
    assert_eq!(body["checks"]["database"], "ok");
    assert_eq!(body["checks"]["redis"], "ok");

    redis.go_down();
    redis.cut();
    let down = eventually_async(Duration::from_secs(20), || async {
        let (s, b) = get(&bot.health).await;
        (s == 503).then_some(b)
    })
    .await
    .expect("503 while Redis is down");
    assert_eq!(down["status"], "unavailable");
    assert!(
        down["checks"]["redis"]
            .as_str()
            .unwrap()
            .starts_with("unavailable"),
        "{down}"
    );
    assert_eq!(down["checks"]["database"], "ok");
    assert_eq!(get(&live).await.0, 200);
    redis.come_back();
    eventually_async(Duration::from_secs(20), || async {
        (get(&bot.health).await.0 == 200).then_some(())
    })
    .await
    .expect("recovered after Redis came back");

    pg.go_down();
    pg.cut();
    let down = eventually_async(Duration::from_secs(20), || async {
        let (s, b) = get(&bot.health).await;
        (s == 503).then_some(b)
    })
    .await
    .expect("503 while PostgreSQL is down");
    assert!(
        down["checks"]["database"]
            .as_str()
            .unwrap()
            .starts_with("unavailable"),
        "{down}"
    );
    assert_eq!(get(&live).await.0, 200);
    pg.come_back();
    eventually_async(Duration::from_secs(30), || async {
        (get(&bot.health).await.0 == 200).then_some(())
    })
    .await
    .expect("recovered after PostgreSQL came back");
}

#[tokio::test]
async fn without_host_it_listens_on_ipv4_and_ipv6() {
    let mut q = Quotebot::new().await;
    q.unset("HOST");
    let bot = q.start(1).await;
    let port = port_of(&bot.health);
    let (s4, _) = get(&format!("http://127.0.0.1:{port}/api/health/live")).await;
    assert_eq!(s4, 200);
    if std::net::TcpListener::bind("[::1]:0").is_ok() {
        let (s6, _) = get(&format!("http://[::1]:{port}/api/health/live")).await;
        assert_eq!(s6, 200);
    }
}

#[tokio::test]
async fn keel_probe_is_the_container_health_check() {
    let q = Quotebot::new().await;
    let bot = q.start(1).await;
    let live = bot.health.replace("/api/health", "/api/health/live");
    let dir = q.dir.path();
    assert_eq!(probe(dir, &live).await, Some(0));
    assert_eq!(probe(dir, &format!("{}/nope", bot.health)).await, Some(1));
    assert_eq!(probe(dir, "http://127.0.0.1:9/").await, Some(1));
    // Without a URL it checks this container's PORT, as the image's
    // HEALTHCHECK does.
    let port = port_of(&bot.health).to_string();
    assert_eq!(probe_env(dir, &[("PORT", port)], &[]).await, Some(0));
    let mut nothing = vec![("PORT", "9".to_owned())];
    for l in keel::services::http().map(|s| s.listener) {
        nothing.push((l.var, "127.0.0.1:9".to_owned()));
    }
    assert_eq!(probe_env(dir, &nothing, &[]).await, Some(1));
}

async fn probe(dir: &std::path::Path, url: &str) -> Option<i32> {
    probe_env(dir, &[], &[url]).await
}

async fn probe_env(dir: &std::path::Path, env: &[(&str, String)], args: &[&str]) -> Option<i32> {
    let mut a = vec!["probe"];
    a.extend_from_slice(args);
    let mut p = keel_testkit::process::KeelProcess::spawn(keel_testkit::process::command(
        crate::harness::KEEL,
        dir,
        env,
        &a,
    ));
    p.wait(Duration::from_secs(10)).await.code()
}

#[tokio::test]
async fn the_gateway_report_counts_ready_shards_and_a_dead_one_started_again() {
    let q = Quotebot::new().await;
    q.discord.set_shards(2);
    let bot = q.start(2).await;
    let gateway = bot.health.replace("/api/health", "/api/health/gateway");
    let ready = eventually_async(Duration::from_secs(30), || async {
        let (status, body) = get(&gateway).await;
        (status == 200 && body["shards"] == 2 && body["ready"] == 2).then_some(body)
    })
    .await;
    let ready = ready.expect("two shards ready");
    assert_eq!(ready["restarts"], 0, "{ready}");
    assert!(ready["changed_at"].is_string(), "{ready}");

    let shard = *bot.shard_pids().first().expect("a shard process");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(shard),
        nix::sys::signal::Signal::SIGKILL,
    );
    let again = eventually_async(Duration::from_secs(30), || async {
        let (_, body) = get(&gateway).await;
        (body["restarts"] == 1 && body["ready"] == 2).then_some(())
    })
    .await;
    assert!(again.is_some(), "the dead shard started again and is ready");
    bot.stop().await;
}
