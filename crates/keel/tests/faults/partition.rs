//! A network partition that drops packets instead of refusing them (the
//! proxy black-holes the connection: nothing through, nothing closed):
//! requests are answered 503 with `Retry-After` within a few seconds, not
//! left to the request timeout; nothing acknowledged is lost; keel serves
//! again by itself when the network heals. PostgreSQL, then Redis (which
//! is optional: keel keeps serving through its partition).

use std::sync::Arc;
use std::time::{Duration, Instant};

use keel_testkit::{Mode, TcpProxy};

use crate::harness::{Stack, account, postgres_addr, postgres_through};
use crate::load::{Kind, Load, Targets, tally};
use crate::stored;

const KINDS: [Kind; 4] = [Kind::Event, Kind::Goal, Kind::History, Kind::Goals];
const SERVICES: [&str; 2] = ["accounts", "usage-alerts"];
/// The longest any answer may take while the network is partitioned.
const FAST: Duration = Duration::from_secs(6);

fn targets(
    keel: &keel_testkit::process::KeelProcess,
    stack: &Stack,
    token: String,
) -> Arc<Targets> {
    Arc::new(Targets {
        usage_alerts: keel.url("usage-alerts").to_owned(),
        accounts: keel.url("accounts").to_owned(),
        svc: String::new(),
        channel_api: String::new(),
        account_token: token,
        appcheck: String::new(),
        stream: stack.stream.clone(),
    })
}

/// Runs `load` through a partition of `proxy` lasting until every kind
/// has been answered for `for_at_least` since it began; prints and checks.
async fn through_partition(load: Load, proxy: &TcpProxy, what: &str) -> Vec<crate::load::Answer> {
    load.until(Duration::from_secs(30), "load before the partition", |a| {
        KINDS.iter().all(|k| tally(a, *k).acknowledged >= 10)
    })
    .await;
    let cut = Instant::now();
    proxy.set_mode(Mode::BlackHole);
    load.until(
        Duration::from_secs(60),
        "answers during the partition",
        |a| {
            KINDS.iter().all(|k| {
                a.iter()
                    .filter(|x| x.kind == *k && x.at > cut + FAST)
                    .count()
                    >= 3
            })
        },
    )
    .await;
    let partitioned_for = cut.elapsed();
    proxy.set_mode(Mode::Pass);
    let healed = Instant::now();
    load.until(Duration::from_secs(60), "writes after the partition", |a| {
        [Kind::Event, Kind::Goal].iter().all(|k| {
            a.iter()
                .any(|x| x.kind == *k && x.at > healed && x.status == 200)
        })
    })
    .await;
    let recovered_in = healed.elapsed();
    let answers = load.stop().await;
    println!(
        "{what} partitioned for {partitioned_for:.2?}; writes acknowledged again {recovered_in:.2?} after it healed"
    );
    for kind in KINDS {
        let t = tally(&answers, kind);
        println!(
            "  {kind:?}: sent {}, acknowledged {}, 503 {}, unanswered {}, other {:?}, slowest {:.2?}",
            t.sent, t.acknowledged, t.unavailable, t.unanswered, t.others, t.slowest
        );
        assert_eq!(
            t.other, 0,
            "{kind:?}: answers other than 2xx or 503: {:?}",
            t.others
        );
        assert_eq!(t.unanswered, 0, "{kind:?}: requests without an answer");
        assert!(
            t.slowest <= FAST,
            "{kind:?}: an answer took {:?}",
            t.slowest
        );
    }
    answers
}

#[tokio::test]
async fn a_postgresql_partition_is_answered_503_within_seconds_and_heals() {
    if keel_testkit::db::postgres_url().is_none() {
        println!("PostgreSQL partition: runs in the PostgreSQL pass");
        return;
    }
    let stack = Stack::start().await;
    let proxy = TcpProxy::start(postgres_addr(&stack.db.url)).await;
    let through = postgres_through(&stack.db.url, proxy.addr);
    let keel = stack.serve(&SERVICES, &[("DATABASE_URL", through)]).await;
    let token = account(keel.url("accounts"), "partition").await;
    let load = Load::paced(
        targets(&keel, &stack, token),
        &KINDS,
        2,
        Duration::from_millis(20),
    );
    let answers = through_partition(load, &proxy, "PostgreSQL").await;
    let p = stack.platform().await;
    for kind in [Kind::Event, Kind::Goal] {
        let lost = stored::lost(&p, &answers, kind).await;
        assert!(
            lost.is_empty(),
            "{kind:?}: {} acknowledged writes lost",
            lost.len()
        );
    }
}

#[tokio::test]
async fn a_redis_partition_leaves_keel_serving() {
    if keel_testkit::db::postgres_url().is_none() {
        println!("Redis partition: runs in the PostgreSQL pass");
        return;
    }
    let stack = Stack::start().await;
    let redis: std::net::SocketAddr = keel_testkit::redis_url()
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let proxy = TcpProxy::start(redis).await;
    let env = [
        ("REDIS_URL", format!("redis://{}", proxy.addr)),
        (
            "KEEL_REDIS_PREFIX",
            format!("keel-partition:{}:", std::process::id()),
        ),
    ];
    let keel = stack.serve(&SERVICES, &env).await;
    let token = account(keel.url("accounts"), "partition").await;
    let load = Load::paced(
        targets(&keel, &stack, token),
        &KINDS,
        2,
        Duration::from_millis(20),
    );
    let answers = through_partition(load, &proxy, "Redis").await;
    for kind in KINDS {
        let t = tally(&answers, kind);
        assert_eq!(
            t.unavailable, 0,
            "{kind:?}: Redis is optional; nothing is refused"
        );
    }
}
