//! PostgreSQL cut under write load: every acknowledged write survives,
//! requests during the outage answer 503 within a bound (no 4xx, no hang),
//! `/readyz` is 503 during and 200 after, and keel recovers by itself.

use std::sync::Arc;
use std::time::{Duration, Instant};

use keel_testkit::TcpProxy;

use crate::harness::{Stack, account, channel_owner, postgres_addr, postgres_through};
use crate::load::{Kind, Load, PATIENCE, Targets, tally};
use crate::stored;

pub const ALL: [Kind; 5] = [
    Kind::Event,
    Kind::Goal,
    Kind::Submission,
    Kind::Registration,
    Kind::Webhook,
];

/// `scheme://host:port` of a base URL (svc's has a path).
pub fn origin(url: &str) -> &str {
    let start = url.find("//").map_or(0, |i| i + 2);
    url[start..].find('/').map_or(url, |i| &url[..start + i])
}

async fn ready(urls: &[String]) -> Vec<u16> {
    let mut out = Vec::new();
    for u in urls {
        let s = reqwest::get(format!("{}/readyz", origin(u)))
            .await
            .map_or(0, |r| r.status().as_u16());
        out.push(s);
    }
    out
}

#[tokio::test]
async fn a_postgresql_outage_under_write_load_loses_no_acknowledged_write() {
    if keel_testkit::db::postgres_url().is_none() {
        println!("PostgreSQL outage: runs in the PostgreSQL pass");
        return;
    }
    let stack = Stack::start().await;
    let proxy = TcpProxy::start(postgres_addr(&stack.db.url)).await;
    let through = postgres_through(&stack.db.url, proxy.addr);
    let services = ["accounts", "usage-alerts", "svc", "channel-api"];
    let keel = stack.serve(&services, &[("DATABASE_URL", through)]).await;
    let urls: Vec<String> = services.iter().map(|s| keel.url(s).to_owned()).collect();
    stack.prepare_svc().await;
    channel_owner(keel.url("channel-api")).await;
    let targets = Arc::new(Targets {
        usage_alerts: keel.url("usage-alerts").to_owned(),
        accounts: keel.url("accounts").to_owned(),
        svc: keel.url("svc").to_owned(),
        channel_api: keel.url("channel-api").to_owned(),
        account_token: account(keel.url("accounts"), "faultpg").await,
        appcheck: stack.appcheck(),
        stream: stack.stream.clone(),
    });
    let load = Load::start(targets, &ALL, 2);
    let acked = |n: usize| {
        move |a: &[crate::load::Answer]| ALL.iter().all(|k| tally(a, *k).acknowledged >= n)
    };
    load.until(
        Duration::from_secs(30),
        "writes before the outage",
        acked(20),
    )
    .await;

    let cut = Instant::now();
    proxy.go_down();
    // The outage lasts until every kind of write has been refused for at
    // least two seconds.
    load.until(Duration::from_secs(30), "503s during the outage", |a| {
        ALL.iter().all(|k| {
            let refused: Vec<_> = a
                .iter()
                .filter(|x| x.kind == *k && x.at > cut && x.status == 503)
                .map(|x| x.at)
                .collect();
            refused
                .first()
                .zip(refused.last())
                .is_some_and(|(first, last)| last.duration_since(*first) >= Duration::from_secs(2))
        })
    })
    .await;
    let during = ready(&urls).await;
    let down_for = cut.elapsed();

    proxy.come_back();
    let back = Instant::now();
    load.until(Duration::from_secs(60), "writes after the outage", |a| {
        ALL.iter().all(|k| {
            a.iter()
                .any(|x| x.kind == *k && x.at > back && x.status == 200)
        })
    })
    .await;
    let recovered_in = back.elapsed();
    let after = keel_testkit::eventually_async(Duration::from_secs(20), || async {
        let s = ready(&urls).await;
        s.iter().all(|c| *c == 200).then_some(s)
    })
    .await;
    let answers = load.stop().await;

    let p = stack.platform().await;
    for line in keel
        .stderr()
        .lines()
        .filter(|l| l.contains("ERROR") && l.contains("internal error"))
    {
        println!("  keel: {line}");
    }
    println!(
        "PostgreSQL cut for {down_for:?} under 2 clients per write; every write acknowledged again {recovered_in:?} after it came back; /readyz during {during:?}, after {after:?}"
    );
    for kind in ALL {
        let t = tally(&answers, kind);
        let lost = stored::lost(&p, &answers, kind).await;
        println!(
            "  {kind:?}: sent {}, acknowledged {}, 503 {}, other {} {:?}, lost {}, slowest answer {:?}",
            t.sent,
            t.acknowledged,
            t.unavailable,
            t.other,
            t.others,
            lost.len(),
            t.slowest
        );
        assert!(lost.is_empty(), "{kind:?}: acknowledged and lost: {lost:?}");
        assert_eq!(t.other, 0, "{kind:?}: answers other than 2xx or 503");
        assert_eq!(t.unanswered, 0, "{kind:?}: requests without an answer");
        assert!(t.slowest < PATIENCE, "{kind:?}: a request hung");
    }
    assert!(
        during.iter().all(|c| *c == 503),
        "/readyz during the outage: {during:?}"
    );
    assert!(after.is_some(), "/readyz never came back to 200");
}
