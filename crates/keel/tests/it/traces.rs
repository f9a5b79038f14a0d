//! Traces over OTLP, read back by a receiver no one here wrote the decoding
//! of (`crates/testkit/checkers/otlp_receiver.py`, the OpenTelemetry
//! project's generated messages): a request's server span with its route
//! and status, its statements, the job it caused linked to it (on another
//! node too), the provider call carrying the trace in `traceparent`;
//! nothing when sampling is off; a bad `OTEL_*` value stops keel; a
//! collector that never answers changes nothing for clients.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use keel_testkit::FakeExpo;
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::KEEL;
use crate::deploy_files::{checker, root};
use crate::process::platform_on;
use crate::push_common::{seed, sent_in_db};

/// The trace a client started, as its `traceparent` names it.
const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

pub(crate) struct Receiver {
    child: Child,
    pub(crate) url: String,
}

impl Receiver {
    pub(crate) fn start() -> Self {
        let mut child = Command::new(checker("python"))
            .arg(root().join("crates/testkit/checkers/otlp_receiver.py"))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().strip_prefix("listening ").unwrap().to_owned();
        Self { child, url }
    }

    pub(crate) async fn spans(&self) -> Vec<Value> {
        let r = reqwest::get(format!("{}/spans", self.url)).await.unwrap();
        r.json().await.unwrap()
    }

    async fn requests(&self) -> u64 {
        self.requests_seen().await["count"].as_u64().unwrap()
    }

    /// `{count, headers: [{name: value}]}` of the exports received.
    pub(crate) async fn requests_seen(&self) -> Value {
        let r = reqwest::get(format!("{}/requests", self.url))
            .await
            .unwrap();
        r.json().await.unwrap()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn env(dir: &std::path::Path, db: &TestDb, expo: &FakeExpo) -> Vec<(&'static str, String)> {
    vec![
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_SVC_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_JOB_POLL_MS", "50".to_owned()),
        ("KEEL_EXPO_URL", expo.url()),
        ("KEEL_EXPO_RECEIPT_DELAY_SECS", "3600".to_owned()),
        ("KEEL_LOG_FORMAT", "json".to_owned()),
    ]
}

/// POST /send with the client's `traceparent`; its id.
async fn send(node: &KeelProcess, password: &str) -> String {
    let r = reqwest::Client::new()
        .post(format!("{}/send", node.url("svc")))
        .basic_auth("boss", Some(password))
        .header("traceparent", format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"))
        .json(&json!({"title": "Traced", "body": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let body: Value = r.json().await.unwrap();
    body["id"].as_str().unwrap().to_owned()
}

/// Waits until `n` messages are recorded as sent.
async fn all_sent(platform: &keel_platform::Platform, n: u64, node: &KeelProcess) {
    let sent = keel_testkit::eventually_async(Duration::from_secs(30), || async {
        (sent_in_db(&platform.db).await == n).then_some(())
    })
    .await;
    assert!(sent.is_some(), "{}", node.stderr());
}

pub(crate) async fn stop(mut node: KeelProcess) -> String {
    node.signal(Signal::SIGTERM);
    assert!(node.wait(Duration::from_secs(20)).await.success());
    node.stderr()
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

fn find(spans: &[Value], what: impl Fn(&Value) -> bool) -> Vec<&Value> {
    spans.iter().filter(|s| what(s)).collect()
}

/// Whether `span` is linked to `cause`, directly or through the jobs
/// between them.
fn caused_by(spans: &[Value], span: &Value, cause: &Value) -> bool {
    let mut at = span.clone();
    for _ in 0..5 {
        let Some(link) = at["links"].as_array().and_then(|l| l.first()).cloned() else {
            return false;
        };
        if link["span_id"] == cause["span_id"] {
            return true;
        }
        match spans.iter().find(|s| s["span_id"] == link["span_id"]) {
            Some(s) => at = s.clone(),
            None => return false,
        }
    }
    false
}

#[tokio::test]
async fn a_push_send_is_one_trace_from_the_request_through_its_statements_jobs_and_expo() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let receiver = Receiver::start();
    let expo = FakeExpo::start().await;
    let mut env = env(dir.path(), &db, &expo);
    env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url.clone()));
    // Lines written inside the request's span and the jobs' spans.
    env.push((
        "RUST_LOG",
        "info,tower_http::trace=debug,keel_platform::jobs=debug".to_owned(),
    ));
    let node = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let platform = platform_on(&db, dir.path()).await;
    let password = seed(&platform, 3).await;
    send(&node, &password).await;
    all_sent(&platform, 3, &node).await;
    let logs = stop(node).await;
    let spans = receiver.spans().await;

    let server = find(&spans, |s| {
        s["kind"] == "SPAN_KIND_SERVER" && attr(s, "http.request.method") == "POST"
    });
    let [server] = server.as_slice() else {
        panic!("one POST server span: {spans:#?}")
    };
    assert_eq!(server["name"], "POST /svc/v1/send", "{server:#}");
    assert_eq!(attr(server, "http.route"), "/svc/v1/send");
    assert_eq!(attr(server, "http.response.status_code"), 202);
    assert_eq!(attr(server, "keel.service"), "svc");
    assert_eq!(
        server["trace_id"], CLIENT_TRACE,
        "the caller's trace goes on"
    );
    assert_eq!(server["parent_span_id"], CLIENT_SPAN);
    assert_eq!(server["resource"]["service.name"], "keel");

    let statements = find(&spans, |s| {
        s["parent_span_id"] == server["span_id"] && !attr(s, "db.operation.name").is_null()
    });
    assert!(
        !statements.is_empty(),
        "statement spans under the request: {spans:#?}"
    );
    for s in &statements {
        assert_eq!(s["kind"], "SPAN_KIND_CLIENT");
        let name = s["name"].as_str().unwrap();
        assert!(
            !name.contains('$') && !name.contains("boss"),
            "no values: {name}"
        );
    }

    let jobs = find(&spans, |s| s["kind"] == "SPAN_KIND_CONSUMER");
    let batches = find(&spans, |s| {
        s["kind"] == "SPAN_KIND_CONSUMER" && caused_by(&spans, s, server)
    });
    assert!(!batches.is_empty(), "jobs linked to the request: {jobs:#?}");
    let outbound = find(&spans, |s| {
        s["kind"] == "SPAN_KIND_CLIENT" && attr(s, "http.request.method") == "POST"
    });
    assert!(
        !outbound.is_empty(),
        "a span for the call to Expo: {spans:#?}"
    );
    for call in &outbound {
        assert_eq!(attr(call, "http.response.status_code"), 200);
        assert!(
            batches
                .iter()
                .any(|b| b["span_id"] == call["parent_span_id"]),
            "the call is inside a job the request caused: {call:#}"
        );
    }
    let sent_with: Vec<String> = expo
        .requests()
        .iter()
        .filter_map(|r| r.headers.get("traceparent").cloned())
        .collect();
    assert!(!sent_with.is_empty(), "Expo was sent a traceparent");
    for tp in &sent_with {
        let parts: Vec<&str> = tp.split('-').collect();
        assert!(
            outbound
                .iter()
                .any(|c| c["trace_id"] == parts[1] && c["span_id"] == parts[2]),
            "{tp} names the outbound span"
        );
    }

    let lines: Vec<Value> = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let request_log = lines.iter().find(|l| l["trace_id"] == CLIENT_TRACE);
    let request_log =
        request_log.unwrap_or_else(|| panic!("a JSON log line with the trace id: {logs}"));
    assert_eq!(request_log["span_id"], server["span_id"], "{request_log}");
    assert!(
        !request_log["span"]["keel.request_id"]
            .as_str()
            .unwrap_or("")
            .is_empty(),
        "the request id stays: {request_log}"
    );
    for job in &batches {
        assert!(
            lines
                .iter()
                .any(|l| l["trace_id"] == job["trace_id"] && l["span_id"] == job["span_id"]),
            "the job's lines carry its span: {job:#}"
        );
    }
}

#[tokio::test]
async fn a_batch_run_by_another_node_is_linked_to_the_request_that_made_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    if !db.is_postgres() {
        println!("two nodes on one database: runs in the PostgreSQL pass");
        return;
    }
    let receiver = Receiver::start();
    let expo = FakeExpo::start().await;
    let mut env = env(dir.path(), &db, &expo);
    env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url.clone()));
    let mut front = env.clone();
    front.push(("KEEL_JOB_CONCURRENCY", "0".to_owned()));
    let a = KeelProcess::serve(command(KEEL, dir.path(), &front, &["serve", "svc"])).await;
    let b = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let platform = platform_on(&db, dir.path()).await;
    let password = seed(&platform, 3).await;
    send(&a, &password).await;
    all_sent(&platform, 3, &b).await;
    stop(a).await;
    stop(b).await;
    let spans = receiver.spans().await;
    let server = find(&spans, |s| s["name"] == "POST /svc/v1/send");
    let [server] = server.as_slice() else {
        panic!("one POST /send span: {spans:#?}")
    };
    let node = |s: &Value| s["resource"]["service.instance.id"].clone();
    let jobs = find(&spans, |s| {
        s["kind"] == "SPAN_KIND_CONSUMER" && caused_by(&spans, s, server)
    });
    assert!(!jobs.is_empty(), "{spans:#?}");
    assert!(
        jobs.iter().all(|j| node(j) != node(server)),
        "node a runs no jobs: every job ran on b"
    );
}

#[tokio::test]
async fn with_sampling_off_nothing_is_exported() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let receiver = Receiver::start();
    let expo = FakeExpo::start().await;
    let mut env = env(dir.path(), &db, &expo);
    env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url.clone()));
    env.push(("OTEL_TRACES_SAMPLER", "always_off".to_owned()));
    let node = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let platform = platform_on(&db, dir.path()).await;
    let password = seed(&platform, 2).await;
    send(&node, &password).await;
    all_sent(&platform, 2, &node).await;
    assert!(
        expo.requests()
            .iter()
            .all(|r| !r.headers.contains_key("traceparent")
                || r.headers["traceparent"].ends_with("-00")),
        "an unsampled trace is passed on as unsampled"
    );
    stop(node).await;
    assert_eq!(
        receiver.requests().await,
        0,
        "{:#?}",
        receiver.spans().await
    );
}

#[tokio::test]
async fn a_bad_otel_value_stops_keel_at_start_naming_the_variable() {
    if !crate::deploy_files::once() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"),
        ("OTEL_TRACES_SAMPLER", "sometimes"),
        ("OTEL_TRACES_SAMPLER_ARG", "2"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "api-key"),
        ("OTEL_SDK_DISABLED", "yes"),
    ];
    for (var, value) in cases {
        let mut env = keel_testkit::offline_env();
        env.push(("KEEL_DATA_DIR", dir.path().display().to_string()));
        env.push((
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://127.0.0.1:4318".to_owned(),
        ));
        env.push(("OTEL_TRACES_SAMPLER", "parentbased_traceidratio".to_owned()));
        env.push((var, value.to_owned()));
        let out = command(KEEL, dir.path(), &env, &["serve", "svc"])
            .output()
            .await
            .unwrap();
        // (Nothing may listen: keel stops before it binds.)
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{var}={value} was taken");
        assert!(stderr.contains(var), "{var}={value}: {stderr}");
    }
}

/// A collector that takes the connection and never answers: every request
/// is answered as without traces, the spans that do not fit the queue are
/// dropped and counted, and keel still stops promptly on SIGTERM.
#[tokio::test]
async fn a_collector_that_never_answers_changes_nothing_for_clients() {
    if !crate::deploy_files::once() {
        return;
    }
    let hole = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hole_url = format!("http://{}", hole.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut conns = Vec::new();
        while let Ok((c, _)) = hole.accept().await {
            conns.push(c);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let mut env = keel_testkit::offline_env();
    env.push(("KEEL_DATA_DIR", dir.path().display().to_string()));
    env.push(("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()));
    env.push(("KEEL_SVC_ADDR", "127.0.0.1:0".to_owned()));
    env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", hole_url));
    let node = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let http = reqwest::Client::new();
    let base = node.url("svc").replace("/svc/v1", "");
    let requests = keel_platform::telemetry::otel::QUEUE + 1_000;
    let statuses = futures::stream::iter(0..requests)
        .map(|_| {
            let http = http.clone();
            let url = format!("{base}/healthz");
            async move { http.get(url).send().await.map(|r| r.status().as_u16()) }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    assert!(
        statuses.iter().all(|s| matches!(s, Ok(200))),
        "every request answered"
    );
    let metrics = reqwest::get(node.url("metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let dropped = metrics
        .lines()
        .find(|l| l.starts_with("keel_trace_spans_dropped_total"))
        .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(
        dropped > 0.0,
        "spans over the queue dropped and counted:\n{metrics}"
    );
    let started = std::time::Instant::now();
    stop(node).await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "stopped within its flush deadline"
    );
    held.abort();
}

use futures::StreamExt as _;
