//! `keel probe [URL]`: the container health check, so the image needs no
//! curl or shell. With a URL: one GET, healthy on 2xx within 3 seconds.
//! Without one: healthy when a keel listener of this container answers its
//! liveness check — quotebot's `/api/health/live` on `PORT` (and `HOST`),
//! else any HTTP service's `/healthz` at its configured address — so one
//! HEALTHCHECK serves the image whatever command it runs, and follows
//! `PORT` and the `KEEL_*_ADDR` settings.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use keel_platform::config::{Source, addr};

/// A listener's address as a client in this container reaches it.
fn local(addr: SocketAddr) -> String {
    let ip = if addr.ip().is_unspecified() {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        addr.ip()
    };
    SocketAddr::new(ip, addr.port()).to_string()
}

/// The liveness URLs of every listener keel could run here, quotebot's
/// first.
pub fn candidates(src: &Source) -> Vec<String> {
    let port = src
        .get("PORT")
        .and_then(|p| p.trim().parse::<u16>().ok())
        .unwrap_or(3000);
    let host = src
        .get("HOST")
        .and_then(|h| h.trim().parse::<IpAddr>().ok())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let mut urls = vec![format!(
        "http://{}/api/health/live",
        local(SocketAddr::new(host, port))
    )];
    for l in crate::services::http().map(|s| s.listener) {
        if let Ok(a) = addr(src, l.var, l.default) {
            urls.push(format!("http://{}/healthz", local(a)));
        }
    }
    urls
}

/// Checks `url`, or the candidates; an error says what answered what.
pub async fn run(url: Option<&str>) -> anyhow::Result<()> {
    keel_platform::crypto::install_crypto_provider();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(3))
        .build()?;
    if let Some(url) = url {
        let status = client.get(url).send().await?.status();
        anyhow::ensure!(status.is_success(), "{url} answered {status}");
        return Ok(());
    }
    let mut seen = Vec::new();
    for url in candidates(&Source::environment()?) {
        match client.get(&url).send().await {
            Ok(r) if r.status().is_success() => return Ok(()),
            Ok(r) => seen.push(format!("{url} answered {}", r.status())),
            // Nothing listens there: keel runs something else here.
            Err(e) if e.is_connect() => {}
            Err(e) => seen.push(format!("{url}: {e}")),
        }
    }
    if seen.is_empty() {
        anyhow::bail!("no keel listener answers in this container");
    }
    anyhow::bail!("{}", seen.join("; "))
}
