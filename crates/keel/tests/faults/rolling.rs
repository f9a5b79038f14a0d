//! A rolling restart behind a load balancer, as an operator does it: two
//! `keel serve` nodes on one PostgreSQL and Redis behind haproxy (Debian's,
//! with the configuration shipped in `deploy/haproxy/haproxy.cfg`, as it
//! is), steady reads and writes through it, each node restarted in turn
//! (SIGTERM, then a new process on the same ports at once). Not one answer
//! may be an error or a failed connection, every acknowledged write is
//! stored, and each node exits 0 within its grace.

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::harness::{Stack, account};
use crate::load::{Kind, Load, Targets, tally};
use crate::stored;

const KINDS: [Kind; 4] = [Kind::Event, Kind::Goal, Kind::History, Kind::Goals];
const SERVICES: [&str; 2] = ["accounts", "usage-alerts"];
/// Every service the shipped configuration names, by its variable suffix.
const ALL: [&str; 5] = [
    "ACCOUNTS",
    "USAGE_ALERTS",
    "CHANNEL_WEB",
    "CHANNEL_API",
    "SVC",
];

fn free_addr() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

/// haproxy on the shipped configuration, its addresses from `env`.
struct Haproxy {
    child: tokio::process::Child,
    stats: String,
}

impl Haproxy {
    fn start(env: &HashMap<String, String>) -> Self {
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/haproxy/haproxy.cfg");
        let child = tokio::process::Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(config)
            .envs(env)
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("haproxy is not installed: scripts/test installs Debian's haproxy");
        Self {
            child,
            stats: format!("http://{}/stats;csv", env["KEEL_HAPROXY_STATS"]),
        }
    }

    /// Whether every server of the backends in `SERVICES` is as `up` says.
    async fn servers(&self, node: &str, up: bool) -> bool {
        let Ok(r) = reqwest::get(&self.stats).await else {
            return false;
        };
        let csv = r.text().await.unwrap_or_default();
        let rows: Vec<&str> = csv
            .lines()
            .filter(|l| {
                SERVICES
                    .iter()
                    .any(|s| l.starts_with(&format!("{},{node},", s.replace('-', "_"))))
            })
            .collect();
        let want = if up { ",UP," } else { ",DOWN," };
        rows.len() == SERVICES.len() && rows.iter().all(|r| r.contains(want))
    }

    async fn until(&self, node: &str, up: bool) {
        let ok = keel_testkit::eventually_async(Duration::from_secs(30), || async {
            self.servers(node, up).await.then_some(())
        })
        .await;
        assert!(
            ok.is_some(),
            "haproxy never saw node {node} {}",
            if up { "up" } else { "down" }
        );
    }
}

#[tokio::test]
async fn rolling_both_nodes_behind_haproxy_answers_every_request() {
    if keel_testkit::db::postgres_url().is_none() {
        println!("two nodes on PostgreSQL and Redis: runs in the PostgreSQL pass");
        return;
    }
    let stack = Stack::start().await;
    let mut env: HashMap<String, String> = HashMap::new();
    for s in ALL {
        env.insert(format!("KEEL_HAPROXY_{s}"), free_addr());
        env.insert(format!("KEEL_NODE_A_{s}"), free_addr());
        env.insert(format!("KEEL_NODE_B_{s}"), free_addr());
    }
    env.insert("KEEL_HAPROXY_STATS".into(), free_addr());
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
    haproxy.until("a", true).await;
    haproxy.until("b", true).await;
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
        haproxy.until(&name.to_lowercase(), true).await;
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

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
