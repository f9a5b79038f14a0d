//! The last answer of each peer keel calls (an HTTP provider by its host,
//! the mail relay as `smtp`), for the console's health page: when, and
//! whether it answered well (a status below 400) or what went wrong. At
//! most [`PEERS`] peers are kept: the hosts come from keel's configuration.

use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex, MutexGuard};

use chrono::{DateTime, Utc};

/// Most peers kept.
const PEERS: usize = 64;

/// A peer's last answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct Answer {
    /// The host (`exp.host`, `api.push.apple.com`) or `smtp`.
    pub peer: String,
    pub at: DateTime<Utc>,
    pub ok: bool,
    /// The status (`200`), or the failure (`connection refused`).
    pub what: String,
}

static ANSWERS: LazyLock<Mutex<BTreeMap<String, Answer>>> = LazyLock::new(Mutex::default);

fn lock() -> MutexGuard<'static, BTreeMap<String, Answer>> {
    ANSWERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Notes `peer`'s answer now.
pub fn record(peer: &str, ok: bool, what: impl Into<String>) {
    let mut all = lock();
    if all.len() >= PEERS && !all.contains_key(peer) {
        return;
    }
    all.insert(
        peer.to_owned(),
        Answer {
            peer: peer.to_owned(),
            at: Utc::now(),
            ok,
            what: what.into(),
        },
    );
}

/// Notes an HTTP peer's answer: its status, or why there was none (in
/// words of its own: an error's text would carry the URL, and a URL may
/// carry a credential).
pub fn http(url: &url::Url, answer: &Result<reqwest::Response, reqwest::Error>) {
    let Some(host) = url.host_str() else { return };
    let peer = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    match answer {
        Ok(resp) => {
            let status = resp.status();
            record(&peer, status.as_u16() < 400, status.as_u16().to_string());
        }
        Err(e) => {
            let what = if e.is_connect() {
                "could not connect"
            } else if e.is_timeout() {
                "timed out"
            } else {
                "the request failed"
            };
            record(&peer, false, what);
        }
    }
}

/// Every peer's last answer, by peer.
pub fn all() -> Vec<Answer> {
    lock().values().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_answer_of_a_peer_replaces_the_one_before() {
        record("peer.test", false, "connection refused");
        record("peer.test", true, "200");
        let found: Vec<Answer> = all()
            .into_iter()
            .filter(|a| a.peer == "peer.test")
            .collect();
        assert_eq!(found.len(), 1);
        assert!(found[0].ok);
        assert_eq!(found[0].what, "200");
    }
}
