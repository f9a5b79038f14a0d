//! haproxy (Debian's) on the configuration shipped in
//! `deploy/haproxy/haproxy.cfg`, as it is, its addresses from the
//! environment the file documents.

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every service the shipped configuration names, by its variable suffix.
pub const ALL: [&str; 5] = [
    "ACCOUNTS",
    "USAGE_ALERTS",
    "CHANNEL_WEB",
    "CHANNEL_API",
    "SVC",
];

/// The stats page's password the tests set.
pub const STATS_PASSWORD: &str = "stats-password-for-tests";

pub fn free_addr() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

pub fn config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/haproxy/haproxy.cfg")
}

/// Free addresses for every variable the configuration reads (two nodes),
/// and the stats password.
pub fn addresses() -> HashMap<String, String> {
    let mut env = HashMap::new();
    for s in ALL {
        env.insert(format!("KEEL_HAPROXY_{s}"), free_addr());
        env.insert(format!("KEEL_NODE_A_{s}"), free_addr());
        env.insert(format!("KEEL_NODE_B_{s}"), free_addr());
    }
    env.insert("KEEL_HAPROXY_STATS".into(), free_addr());
    env.insert("KEEL_HAPROXY_STATS_PASSWORD".into(), STATS_PASSWORD.into());
    env
}

pub struct Haproxy {
    child: tokio::process::Child,
    pub stats: String,
}

impl Haproxy {
    pub fn start(env: &HashMap<String, String>) -> Self {
        keel_testkit::init();
        let child = tokio::process::Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(config())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
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

    /// Whether every server named `node` of the backends of `services` is
    /// as `up` says.
    async fn servers(&self, services: &[&str], node: &str, up: bool) -> bool {
        let Ok(r) = reqwest::Client::new()
            .get(&self.stats)
            .basic_auth("keel", Some(STATS_PASSWORD))
            .send()
            .await
        else {
            return false;
        };
        let csv = r.text().await.unwrap_or_default();
        let rows: Vec<&str> = csv
            .lines()
            .filter(|l| {
                services
                    .iter()
                    .any(|s| l.starts_with(&format!("{},{node},", s.replace('-', "_"))))
            })
            .collect();
        let want = if up { ",UP," } else { ",DOWN," };
        rows.len() == services.len() && rows.iter().all(|r| r.contains(want))
    }

    pub async fn until(&self, services: &[&str], node: &str, up: bool) {
        let ok = keel_testkit::eventually_async(Duration::from_secs(30), || async {
            self.servers(services, node, up).await.then_some(())
        })
        .await;
        assert!(
            ok.is_some(),
            "haproxy never saw node {node} {}",
            if up { "up" } else { "down" }
        );
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
