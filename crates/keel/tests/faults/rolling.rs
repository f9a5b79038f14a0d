//! A rolling restart behind a load balancer, as an operator does it: two
//! `keel serve` nodes on one PostgreSQL and Redis behind haproxy (Debian's,
//! with the configuration shipped in `deploy/haproxy/haproxy.cfg`, as it
//! is), steady reads and writes through it, each node restarted in turn
//! (SIGTERM, then a new process on the same ports at once). Not one answer
//! may be an error or a failed connection, every acknowledged write is
//! stored, and each node exits 0 within its grace.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::haproxy::Haproxy;
use crate::harness::{Stack, account};
use crate::load::{Kind, Load, Targets, tally};
use crate::stored;

const KINDS: [Kind; 4] = [Kind::Event, Kind::Goal, Kind::History, Kind::Goals];
const SERVICES: [&str; 2] = ["accounts", "usage-alerts"];

#[tokio::test]
async fn rolling_both_nodes_behind_haproxy_answers_every_request() {
    if keel_testkit::db::postgres_url().is_none() {
        println!("two nodes on PostgreSQL and Redis: runs in the PostgreSQL pass");
        return;
    }
    let stack = Stack::start().await;
    let env: HashMap<String, String> = crate::haproxy::addresses();
    let node_env = |node: &str| -> Vec<(&'static str, String)> {
        vec![
            ("REDIS_URL", keel_testkit::redis_url()),
            (
                "KEEL_REDIS_PREFIX",
                format!("keel-rolling:{}:", std::process::id()),
            ),
            ("KEEL_SHUTDOWN_DRAIN_SECS", "5".to_owned()),
            (
                "KEEL_ACCOUNTS_ADDR",
                env[&format!("KEEL_NODE_{node}_ACCOUNTS")].clone(),
            ),
            (
                "KEEL_USAGE_ALERTS_ADDR",
                env[&format!("KEEL_NODE_{node}_USAGE_ALERTS")].clone(),
            ),
        ]
    };
    let mut a = stack.serve(&SERVICES, &node_env("A")).await;
    let mut b = stack.serve(&SERVICES, &node_env("B")).await;
    let haproxy = Haproxy::start(&env);
    haproxy.until(&SERVICES, "a", true).await;
    haproxy.until(&SERVICES, "b", true).await;
    let front = |s: &str| format!("http://{}", env[&format!("KEEL_HAPROXY_{s}")]);
    let token = account(&front("ACCOUNTS"), "rolling").await;
    let targets = Arc::new(Targets {
        usage_alerts: front("USAGE_ALERTS"),
        accounts: front("ACCOUNTS"),
        svc: String::new(),
        channel_api: String::new(),
        account_token: token,
        appcheck: String::new(),
        stream: stack.stream.clone(),
    });
    // Steady traffic: two clients of each kind, each a request every 50 ms
    // (about 160 requests a second; a user holds at most 1,000 goals).
    let load = Load::paced(targets, &KINDS, 2, Duration::from_millis(50));
    load.until(Duration::from_secs(30), "load before the restarts", |a| {
        KINDS.iter().all(|k| tally(a, *k).acknowledged >= 10)
    })
    .await;
    let started = Instant::now();
    for (name, node) in [("A", &mut a), ("B", &mut b)] {
        let asked = Instant::now();
        node.signal(Signal::SIGTERM);
        let status = node.wait(Duration::from_secs(40)).await;
        assert!(
            status.success(),
            "node {name} exited {status:?}:\n{}",
            node.stderr()
        );
        println!(
            "node {name}: stopped in {:.2?} (drain included)",
            asked.elapsed()
        );
        *node = stack.serve(&SERVICES, &node_env(name)).await;
        haproxy.until(&SERVICES, &name.to_lowercase(), true).await;
        println!(
            "node {name}: back in rotation {:.2?} after SIGTERM",
            asked.elapsed()
        );
    }
    let rolled = started.elapsed();
    let answers = load.stop().await;
    let p = stack.platform().await;
    let mut problems = Vec::new();
    for kind in KINDS {
        let t = tally(&answers, kind);
        println!(
            "{kind:?}: {} sent, {} acknowledged, {} unavailable, {} unanswered, other {:?}, slowest {:.2?}",
            t.sent, t.acknowledged, t.unavailable, t.unanswered, t.others, t.slowest
        );
        if t.acknowledged != t.sent {
            problems.push(format!("{kind:?}: {t:?}"));
        }
        let lost = if matches!(kind, Kind::Event | Kind::Goal) {
            stored::lost(&p, &answers, kind).await
        } else {
            Vec::new()
        };
        if !lost.is_empty() {
            problems.push(format!("{kind:?}: {} acknowledged writes lost", lost.len()));
        }
    }
    println!("both nodes rolled in {rolled:.2?}");
    assert!(problems.is_empty(), "{problems:#?}");
}
