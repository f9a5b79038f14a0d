//! Write load: a few clients per kind of write, each sending one request
//! after another until told to stop, every answer recorded with the key
//! that finds its effect in the database afterwards.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use keel_testkit::FakeStream;
use keel_testkit::getstream::Delivery;
use serde_json::json;

use crate::harness::FORM;

/// How long a client waits for an answer before counting it as none.
pub const PATIENCE: Duration = Duration::from_secs(15);

/// A kind of write and where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// usage-alerts `POST /event`: key `sessionId`.
    Event,
    /// accounts `POST /goals/weekly`: key the title.
    Goal,
    /// svc `POST /submit/{form}`: key the `name` field.
    Submission,
    /// svc `POST /register`: key the push token.
    Registration,
    /// channel-api `POST /api/webhooks/stream`: key `X-Webhook-Id`.
    Webhook,
    /// A read: usage-alerts `GET /history`.
    History,
    /// A read: accounts `GET /goals/weekly`.
    Goals,
}

/// What the clients need: base URLs and credentials.
pub struct Targets {
    pub usage_alerts: String,
    pub accounts: String,
    pub svc: String,
    pub channel_api: String,
    pub account_token: String,
    pub appcheck: String,
    pub stream: FakeStream,
}

#[derive(Debug, Clone)]
pub struct Answer {
    pub kind: Kind,
    pub key: String,
    /// 0: no answer within [`PATIENCE`] (or the connection failed).
    pub status: u16,
    pub took: Duration,
    pub at: Instant,
}

pub struct Load {
    stop: Arc<AtomicBool>,
    answers: Arc<Mutex<Vec<Answer>>>,
    clients: Vec<tokio::task::JoinHandle<()>>,
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

impl Load {
    /// `per_kind` clients for each kind in `kinds`, each sending its next
    /// request as soon as it has an answer.
    pub fn start(targets: Arc<Targets>, kinds: &[Kind], per_kind: usize) -> Self {
        Self::paced(targets, kinds, per_kind, Duration::ZERO)
    }

    /// The same, each client pausing `pause` between requests: steady
    /// traffic rather than all a node can take.
    pub fn paced(targets: Arc<Targets>, kinds: &[Kind], per_kind: usize, pause: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let answers = Arc::new(Mutex::new(Vec::new()));
        let http = reqwest::Client::builder()
            .timeout(PATIENCE)
            .build()
            .unwrap();
        let mut clients = Vec::new();
        for &kind in kinds {
            for _ in 0..per_kind {
                let (stop, answers, targets, http) =
                    (stop.clone(), answers.clone(), targets.clone(), http.clone());
                clients.push(tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        let n = NEXT.fetch_add(1, Ordering::Relaxed);
                        let key = format!("{kind:?}-{}-{n}", std::process::id());
                        let at = Instant::now();
                        let status = send(&http, &targets, kind, &key).await;
                        answers.lock().unwrap().push(Answer {
                            kind,
                            key,
                            status,
                            took: at.elapsed(),
                            at,
                        });
                        tokio::time::sleep(pause).await;
                    }
                }));
            }
        }
        Self {
            stop,
            answers,
            clients,
        }
    }

    /// The answers so far.
    pub fn answers(&self) -> Vec<Answer> {
        self.answers.lock().unwrap().clone()
    }

    /// Waits until `check` holds for the answers so far (at most `within`).
    pub async fn until(&self, within: Duration, what: &str, check: impl Fn(&[Answer]) -> bool) {
        let ok = keel_testkit::eventually(within, || check(&self.answers()).then_some(())).await;
        if ok.is_none() {
            let mut seen = std::collections::BTreeMap::new();
            for a in self.answers() {
                *seen
                    .entry(format!("{:?} {}", a.kind, a.status))
                    .or_insert(0) += 1;
            }
            panic!("{what}: not within {within:?}; answers so far: {seen:?}");
        }
    }

    /// Stops the clients (each finishes its request); every answer.
    pub async fn stop(self) -> Vec<Answer> {
        self.stop.store(true, Ordering::Relaxed);
        for c in self.clients {
            c.await.unwrap();
        }
        self.answers.lock().unwrap().clone()
    }
}

async fn send(http: &reqwest::Client, t: &Targets, kind: Kind, key: &str) -> u16 {
    let sent = match kind {
        Kind::Event => {
            http.post(format!("{}/event", t.usage_alerts))
                .bearer_auth("fault-suite-user")
                .json(&json!({
                    "sessionId": key, "timestamp": "2026-11-25T10:00:00Z", "model": "m",
                    "inputTokens": 1, "outputTokens": 1, "cacheReadTokens": 0,
                    "cacheWriteTokens": 0, "costUSD": 0.0001
                }))
                .send()
                .await
        }
        Kind::Goal => {
            http.post(format!("{}/goals/weekly", t.accounts))
                .bearer_auth(&t.account_token)
                .form(&[("title", key)])
                .send()
                .await
        }
        Kind::Submission => {
            http.post(format!("{}/submit/{FORM}", t.svc))
                .header("X-Vendor-AppCheck", &t.appcheck)
                .json(&json!({"fields": {"name": key}}))
                .send()
                .await
        }
        Kind::Registration => http
            .post(format!("{}/register", t.svc))
            .header("X-Vendor-AppCheck", &t.appcheck)
            .json(&json!({"push_token": format!("ExponentPushToken[{key}]"), "device_type": "ios"}))
            .send()
            .await,
        Kind::History => {
            http.get(format!("{}/history?limit=5", t.usage_alerts))
                .bearer_auth("fault-suite-user")
                .send()
                .await
        }
        Kind::Goals => {
            http.get(format!("{}/goals/weekly", t.accounts))
                .bearer_auth(&t.account_token)
                .send()
                .await
        }
        Kind::Webhook => {
            let event = FakeStream::event("call.member_added", "livestream:channel", json!({}));
            let delivery = Delivery {
                webhook_id: Some(key.to_owned()),
                ..Default::default()
            };
            let url = format!("{}/api/webhooks/stream", t.channel_api);
            return tokio::time::timeout(PATIENCE, t.stream.try_deliver(&url, &event, delivery))
                .await
                .ok()
                .and_then(Result::ok)
                .map_or(0, |r| r.status().as_u16());
        }
    };
    sent.map_or(0, |r| r.status().as_u16())
}

/// Counts of one kind's answers.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub sent: usize,
    pub acknowledged: usize,
    pub unavailable: usize,
    /// No answer: the connection failed (or nothing came in time).
    pub unanswered: usize,
    pub other: usize,
    /// The statuses counted in `other`.
    pub others: Vec<u16>,
    pub slowest: Duration,
}

pub fn tally(answers: &[Answer], kind: Kind) -> Tally {
    let mut t = Tally::default();
    for a in answers.iter().filter(|a| a.kind == kind) {
        t.sent += 1;
        t.slowest = t.slowest.max(a.took);
        match a.status {
            200..=299 => t.acknowledged += 1,
            503 | 507 => t.unavailable += 1,
            0 => t.unanswered += 1,
            s => {
                t.other += 1;
                t.others.push(s);
            }
        }
    }
    t
}

/// The keys of one kind's acknowledged writes.
pub fn acknowledged(answers: &[Answer], kind: Kind) -> Vec<String> {
    answers
        .iter()
        .filter(|a| a.kind == kind && (200..300).contains(&a.status))
        .map(|a| a.key.clone())
        .collect()
}
