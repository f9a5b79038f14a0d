//! The shipped haproxy configuration never replays a write and keeps its
//! stats page behind a password: a request that reached a node and got no
//! answer is retried on the other node only when its method is safe to
//! repeat; haproxy refuses to start without the stats password.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::haproxy::{Haproxy, STATS_PASSWORD, addresses, config};

/// A node that answers its health check and takes every other request in,
/// counts it, and closes the connection without a word (a node that
/// processed the request and died before answering).
async fn silent_node(addr: &str, seen: Arc<AtomicUsize>) {
    let listener = TcpListener::bind(addr).await.unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let Ok(n) = s.read(&mut buf).await else {
                    return;
                };
                let head = String::from_utf8_lossy(&buf[..n]);
                if head.starts_with("GET /readyz") {
                    let _ = s
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                        )
                        .await;
                } else {
                    seen.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
}

#[tokio::test]
async fn a_write_that_reached_a_node_is_never_sent_again_and_a_read_is() {
    if keel_testkit::db::postgres_url().is_some() {
        println!("no database involved: runs in the SQLite pass");
        return;
    }
    let env = addresses();
    let seen = Arc::new(AtomicUsize::new(0));
    silent_node(&env["KEEL_NODE_A_SVC"], seen.clone()).await;
    silent_node(&env["KEEL_NODE_B_SVC"], seen.clone()).await;
    let haproxy = Haproxy::start(&env);
    haproxy.until(&["svc"], "a", true).await;
    haproxy.until(&["svc"], "b", true).await;
    let front = format!("http://{}/svc/v1/send", env["KEEL_HAPROXY_SVC"]);
    let http = reqwest::Client::new();
    for method in [
        reqwest::Method::POST,
        reqwest::Method::PUT,
        reqwest::Method::DELETE,
    ] {
        seen.store(0, Ordering::SeqCst);
        // haproxy answers 502, or closes as the node did.
        let r = http.request(method.clone(), &front).body("{}").send().await;
        assert!(
            r.as_ref().map_or(true, |r| r.status() == 502),
            "{method}: {r:?}"
        );
        assert_eq!(
            seen.load(Ordering::SeqCst),
            1,
            "{method} sent more than once"
        );
    }
    seen.store(0, Ordering::SeqCst);
    let r = http.get(&front).send().await;
    assert!(r.as_ref().map_or(true, |r| r.status() == 502), "{r:?}");
    assert!(seen.load(Ordering::SeqCst) > 1, "a GET is retried");
}

#[tokio::test]
async fn the_stats_page_asks_for_its_password_and_haproxy_needs_one() {
    if keel_testkit::db::postgres_url().is_some() {
        println!("no database involved: runs in the SQLite pass");
        return;
    }
    let env = addresses();
    let haproxy = Haproxy::start(&env);
    // haproxy may close a connection after answering its stats page's 401;
    // a pooled connection reused just then fails as an incomplete message,
    // so each request here opens its own.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let ok = keel_testkit::eventually_async(std::time::Duration::from_secs(10), || async {
        let r = http.get(&haproxy.stats).send().await.ok()?;
        Some(r.status())
    })
    .await;
    assert_eq!(ok.map(|s| s.as_u16()), Some(401));
    let r = http
        .get(&haproxy.stats)
        .basic_auth("keel", Some("wrong"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = http
        .get(&haproxy.stats)
        .basic_auth("keel", Some(STATS_PASSWORD))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    for password in [None, Some("")] {
        let mut env: HashMap<String, String> = env.clone();
        env.remove("KEEL_HAPROXY_STATS_PASSWORD");
        if let Some(p) = password {
            env.insert("KEEL_HAPROXY_STATS_PASSWORD".into(), p.into());
        }
        let out = std::process::Command::new("haproxy")
            .arg("-c")
            .arg("-f")
            .arg(config())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(&env)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{password:?}: haproxy started");
        assert!(said.contains("KEEL_HAPROXY_STATS_PASSWORD"), "{said}");
    }
}

/// A node that answers its health check and every other request with 200,
/// keeping the last request's `X-Forwarded-Proto` values.
async fn recording_node(addr: &str, seen: Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind(addr).await.unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let Ok(n) = s.read(&mut buf).await else {
                    return;
                };
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                if !head.starts_with("GET /readyz") {
                    let protos: Vec<String> = head
                        .lines()
                        .filter_map(|l| l.split_once(':'))
                        .filter(|(k, _)| k.eq_ignore_ascii_case("x-forwarded-proto"))
                        .map(|(_, v)| v.trim().to_owned())
                        .collect();
                    seen.lock().unwrap().push(protos.join(","));
                }
                let _ = s
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                    )
                    .await;
            });
        }
    });
}

#[tokio::test]
async fn the_scheme_a_node_is_told_is_the_connections_never_the_clients() {
    if keel_testkit::db::postgres_url().is_some() {
        println!("no database involved: runs in the SQLite pass");
        return;
    }
    let env = addresses();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    recording_node(&env["KEEL_NODE_A_SVC"], seen.clone()).await;
    recording_node(&env["KEEL_NODE_B_SVC"], seen.clone()).await;
    let haproxy = Haproxy::start(&env);
    haproxy.until(&["svc"], "a", true).await;
    let front = format!("http://{}/svc/v1/admin/login", env["KEEL_HAPROXY_SVC"]);
    let r = reqwest::Client::new()
        .post(&front)
        .header("X-Forwarded-Proto", "https")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let told = seen.lock().unwrap().clone();
    assert_eq!(
        told,
        ["http"],
        "a plain connection is http, whatever the client says"
    );
}
