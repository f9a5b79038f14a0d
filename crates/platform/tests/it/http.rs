use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::DefaultBodyLimit;
use axum::extract::rejection::JsonRejection;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use keel_platform::config::HttpConfig;
use keel_platform::http::{self, PlatformError, ServiceApp};
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_testkit::{TcpProxy, TestPlatform};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn render(e: PlatformError) -> Response {
    (
        e.status(),
        Json(json!({"shape": "test", "error": e.message()})),
    )
        .into_response()
}

async fn echo(body: Result<Json<Value>, JsonRejection>) -> Response {
    match body {
        Ok(Json(v)) => Json(v).into_response(),
        Err(r) => render(PlatformError::from_rejection(r.status(), r.body_text())),
    }
}

async fn panics() -> &'static str {
    panic!("boom")
}

/// How many `/slow` requests have started (so a test can wait for one).
static SLOW_STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

async fn slow_request_in_flight(before: usize) {
    let started = keel_testkit::eventually(Duration::from_secs(10), || {
        (SLOW_STARTED.load(std::sync::atomic::Ordering::SeqCst) > before).then_some(())
    })
    .await;
    assert!(started.is_some(), "the slow request never started");
}

fn routes() -> OpenApiRouter {
    OpenApiRouter::new()
        .route("/panic", get(panics))
        .route(
            "/slow",
            get(|| async {
                SLOW_STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(600)).await;
                "done"
            }),
        )
        .route("/echo", post(echo))
        .route(
            "/echo-big",
            post(echo).layer(DefaultBodyLimit::max(64 * 1024)),
        )
        .route("/large", get(|| async { "x".repeat(20_000) }))
        .route("/stream-panic", get(stream_panics))
}

/// A streamed body whose second chunk panics.
async fn stream_panics() -> Response {
    use futures::StreamExt;
    let first = futures::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from(
        "first chunk\n".repeat(100),
    ))]);
    let then = futures::stream::once(async {
        if true {
            panic!("the second chunk blew up");
        }
        Ok(bytes::Bytes::new())
    });
    http::stream_body(first.chain(then)).into_response()
}

fn http_config(timeout: Duration) -> HttpConfig {
    HttpConfig {
        request_timeout: timeout,
        body_limit: 1024,
        shutdown_grace: Duration::from_secs(5),
        shutdown_drain: Duration::ZERO,
        start_hold: Duration::from_secs(1),
        trusted_proxies: keel_platform::config::TrustedProxies::default(),
        slow_request: None,
    }
}

struct Server {
    addr: SocketAddr,
    stop: CancellationToken,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
    _tp: TestPlatform,
}

async fn server_with(tp: TestPlatform, cfg: HttpConfig) -> Server {
    let app = ServiceApp {
        name: "test",
        base_path: String::new(),
        routes: routes(),
        render,
    };
    let router = http::finish(
        app,
        tp.platform.readiness(&keel_platform::tasks::Tasks::new()),
        &cfg,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let done = tokio::spawn(http::serve(
        listener,
        router,
        stop.clone(),
        cfg.shutdown_grace,
    ));
    Server {
        addr,
        stop,
        done,
        _tp: tp,
    }
}

async fn server() -> Server {
    server_with(
        TestPlatform::start(&[]).await,
        http_config(Duration::from_secs(5)),
    )
    .await
}

impl Server {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

async fn json_of(resp: reqwest::Response) -> Value {
    resp.json().await.expect("a JSON body")
}

#[tokio::test]
async fn an_unknown_path_answers_404_in_the_service_shape() {
    let s = server().await;
    let resp = reqwest::get(s.url("/nope")).await.unwrap();
    assert_eq!(resp.status(), 404);
    assert_eq!(json_of(resp).await["shape"], "test");
}

#[tokio::test]
async fn a_wrong_method_answers_405_in_the_service_shape() {
    let s = server().await;
    let resp = reqwest::Client::new()
        .delete(s.url("/large"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    assert_eq!(json_of(resp).await["shape"], "test");
}

#[tokio::test]
async fn a_panicking_handler_answers_500_in_the_service_shape_and_the_server_lives_on() {
    let s = server().await;
    let resp = reqwest::get(s.url("/panic")).await.unwrap();
    assert_eq!(resp.status(), 500);
    let body = json_of(resp).await;
    assert_eq!(body["shape"], "test");
    assert!(
        !body.to_string().contains("boom"),
        "panic details must not leak"
    );
    assert_eq!(reqwest::get(s.url("/healthz")).await.unwrap().status(), 200);
}

#[tokio::test]
async fn a_request_over_the_timeout_answers_408_in_the_service_shape() {
    let s = server_with(
        TestPlatform::start(&[]).await,
        http_config(Duration::from_millis(100)),
    )
    .await;
    let resp = reqwest::get(s.url("/slow")).await.unwrap();
    assert_eq!(resp.status(), 408);
    assert_eq!(json_of(resp).await["shape"], "test");
}

#[tokio::test]
async fn a_body_over_the_default_limit_answers_413() {
    let s = server().await;
    let big = json!({"data": "x".repeat(2000)});
    let resp = reqwest::Client::new()
        .post(s.url("/echo"))
        .json(&big)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    assert_eq!(json_of(resp).await["shape"], "test");
}

#[tokio::test]
async fn a_route_may_raise_its_own_body_limit() {
    let s = server().await;
    let big = json!({"data": "x".repeat(2000)});
    let resp = reqwest::Client::new()
        .post(s.url("/echo-big"))
        .json(&big)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(json_of(resp).await, big);
}

#[tokio::test]
async fn malformed_json_and_a_wrong_content_type_are_4xx_in_the_service_shape() {
    let s = server().await;
    let client = reqwest::Client::new();
    let resp = client
        .post(s.url("/echo"))
        .header("content-type", "application/json")
        .body("{nope")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert_eq!(json_of(resp).await["shape"], "test");
    let resp = client
        .post(s.url("/echo"))
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 415);
    assert_eq!(json_of(resp).await["shape"], "test");
}

#[tokio::test]
async fn every_response_carries_a_request_id_and_a_given_one_is_kept() {
    let s = server().await;
    let resp = reqwest::get(s.url("/healthz")).await.unwrap();
    let id = resp.headers().get("x-request-id").expect("a request id");
    assert_eq!(id.len(), 36);
    let resp = reqwest::Client::new()
        .get(s.url("/healthz"))
        .header("x-request-id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["x-request-id"], "abc-123");
}

#[tokio::test]
async fn large_responses_are_gzip_compressed_when_the_client_accepts_it() {
    let s = server().await;
    let resp = reqwest::Client::new()
        .get(s.url("/large"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-encoding"], "gzip");
    assert!(resp.bytes().await.unwrap().len() < 20_000);
}

#[tokio::test]
async fn small_answers_and_brotli_only_clients_get_the_answer_uncompressed() {
    let s = server().await;
    let client = reqwest::Client::new();
    // Under 4 KiB: not worth a compressor's set-up.
    let small = client
        .post(s.url("/echo-big"))
        .header("accept-encoding", "gzip, br")
        .json(&json!({"text": "x".repeat(usize::from(http::COMPRESS_FROM) - 100)}))
        .send()
        .await
        .unwrap();
    assert_eq!(small.status(), 200);
    assert!(!small.headers().contains_key("content-encoding"));
    // Brotli is for the files compressed at build time, not answers.
    let large = client
        .get(s.url("/large"))
        .header("accept-encoding", "br")
        .send()
        .await
        .unwrap();
    assert!(!large.headers().contains_key("content-encoding"));
    assert_eq!(large.bytes().await.unwrap().len(), 20_000);
}

#[tokio::test]
async fn an_answer_to_a_request_with_a_cookie_is_never_compressed() {
    // BREACH: a secret compressed beside attacker-chosen input leaks by
    // size, and a browser attaches cookies to what another site sends.
    let s = server().await;
    let resp = reqwest::Client::new()
        .get(s.url("/large"))
        .header("accept-encoding", "gzip, br")
        .header("cookie", "session=abc")
        .send()
        .await
        .unwrap();
    assert!(!resp.headers().contains_key("content-encoding"));
    assert!(resp.bytes().await.unwrap().len() >= 20_000);
}

#[tokio::test]
async fn a_panic_in_a_streamed_body_cuts_the_response_off_and_is_counted() {
    let s = server().await;
    for enc in keel_testkit::encoding::ENCODINGS {
        let sent = reqwest::Client::new()
            .get(s.url("/stream-panic"))
            .header("accept-encoding", enc)
            .header("x-request-id", format!("body-panic-{enc}"))
            .send()
            .await;
        // The head may or may not have gone out before the panic (an
        // encoder buffers); either way the client must see an aborted
        // response, never a short one that looks complete.
        if let Ok(resp) = sent {
            assert_eq!(resp.status(), 200);
            assert!(
                resp.bytes().await.is_err(),
                "{enc}: the body was not cut off"
            );
        }
    }
    let text = keel_platform::telemetry::prometheus()
        .expect("a recorder")
        .render();
    assert!(
        text.contains(r#"keel_http_body_panics_total{service="test"} 3"#),
        "{text}"
    );
    // The server lives on.
    assert_eq!(reqwest::get(s.url("/healthz")).await.unwrap().status(), 200);
}

#[tokio::test]
async fn the_openapi_document_lists_the_health_routes() {
    let s = server().await;
    let doc = json_of(reqwest::get(s.url("/openapi.json")).await.unwrap()).await;
    assert_eq!(doc["info"]["title"], "keel test");
    assert!(doc["paths"]["/healthz"]["get"].is_object());
    assert!(doc["paths"]["/readyz"]["get"].is_object());
}

#[tokio::test]
async fn healthz_and_readyz_answer_200_when_all_is_well() {
    let s = server().await;
    assert_eq!(reqwest::get(s.url("/healthz")).await.unwrap().status(), 200);
    let resp = reqwest::get(s.url("/readyz")).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(json_of(resp).await["checks"]["database"], "ok");
}

#[tokio::test]
async fn metrics_count_requests_by_service_route_and_status() {
    let s = server().await;
    reqwest::get(s.url("/healthz")).await.unwrap();
    let text = keel_platform::telemetry::prometheus()
        .expect("a recorder")
        .render();
    assert!(
        text.contains(
            r#"keel_http_requests_total{service="test",method="GET",route="/healthz",status="200"}"#
        ),
        "{text}"
    );
    assert!(text.contains("keel_http_request_duration_seconds_bucket"));
}

#[tokio::test]
async fn shutdown_lets_an_in_flight_request_finish_then_stops() {
    let s = server().await;
    let url = s.url("/slow");
    let health = s.url("/healthz");
    let before = SLOW_STARTED.load(std::sync::atomic::Ordering::SeqCst);
    let request = tokio::spawn(async move { reqwest::get(url).await });
    slow_request_in_flight(before).await;
    s.stop.cancel();
    let resp = request.await.unwrap().unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.text().await.unwrap(), "done");
    tokio::time::timeout(Duration::from_secs(5), s.done)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
    assert!(reqwest::get(health).await.is_err(), "no longer accepting");
}

#[tokio::test]
async fn shutdown_gives_up_on_requests_after_the_grace() {
    let mut cfg = http_config(Duration::from_secs(30));
    cfg.shutdown_grace = Duration::from_millis(100);
    let s = server_with(TestPlatform::start(&[]).await, cfg).await;
    let url = s.url("/slow");
    let before = SLOW_STARTED.load(std::sync::atomic::Ordering::SeqCst);
    let _request = tokio::spawn(async move { reqwest::get(url).await });
    slow_request_in_flight(before).await;
    let started = Instant::now();
    s.stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), s.done)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
    assert!(started.elapsed() < Duration::from_millis(450));
}

#[tokio::test]
async fn readyz_stays_200_and_says_degraded_while_redis_is_unreachable() {
    let redis: SocketAddr = "127.0.0.1:6379".parse().unwrap();
    let proxy = TcpProxy::start(redis).await;
    let url = format!("redis://{}", proxy.addr);
    let tp = TestPlatform::start(&[("REDIS_URL", url.as_str())]).await;
    let s = server_with(tp, http_config(Duration::from_secs(30))).await;
    let ready = || async { json_of(reqwest::get(s.url("/readyz")).await.unwrap()).await };
    assert_eq!(ready().await["status"], "ok");

    proxy.go_down();
    let resp = reqwest::get(s.url("/readyz")).await.unwrap();
    assert_eq!(
        resp.status(),
        200,
        "Redis is optional: the node keeps serving"
    );
    let body = json_of(resp).await;
    assert_eq!(body["status"], "degraded");
    assert!(
        body["checks"]["redis"]
            .as_str()
            .unwrap()
            .starts_with("unavailable")
    );
    assert_eq!(body["checks"]["database"], "ok");

    proxy.come_back();
    let back = keel_testkit::eventually_async(Duration::from_secs(10), || async {
        (ready().await["status"] == "ok").then_some(())
    })
    .await;
    assert!(back.is_some(), "readyz says ok once Redis is back");
}

#[tokio::test]
async fn readyz_is_503_while_the_database_is_unreachable_and_recovers_by_itself() {
    // An embedded SQLite file cannot become unreachable; PostgreSQL can.
    let Some(pg) = keel_testkit::db::postgres_url() else {
        return;
    };
    let upstream: SocketAddr = {
        let url = url::Url::parse(&pg).unwrap();
        let host = url.host_str().unwrap().replace("localhost", "127.0.0.1");
        format!("{host}:{}", url.port().unwrap_or(5432))
            .parse()
            .unwrap()
    };
    let proxy = TcpProxy::start(upstream).await;
    // The schema is created through the direct URL, used through the proxy.
    let (mut source, _db, _dir) = TestPlatform::prepare(&[]).await;
    let direct = source.get("DATABASE_URL").unwrap().to_owned();
    let mut via_proxy = url::Url::parse(&direct).unwrap();
    via_proxy.set_port(Some(proxy.addr.port())).unwrap();
    via_proxy.set_host(Some("127.0.0.1")).unwrap();
    source.set("DATABASE_URL", via_proxy.to_string());
    source.set("KEEL_DB_ACQUIRE_TIMEOUT_SECS", "1");
    let cfg = keel_platform::config::PlatformConfig::from_source(&source).unwrap();
    let platform = keel_platform::Platform::connect(cfg).await.unwrap();
    platform.migrate(&[]).await.unwrap();
    let tp = TestPlatform {
        platform,
        source,
        db: _db,
        data_dir: _dir,
    };
    let s = server_with(tp, http_config(Duration::from_secs(30))).await;
    let ready = || async { reqwest::get(s.url("/readyz")).await.unwrap() };
    assert_eq!(ready().await.status(), 200);

    proxy.go_down();
    let resp = ready().await;
    assert_eq!(resp.status(), 503);
    assert!(
        json_of(resp).await["checks"]["database"]
            .as_str()
            .unwrap()
            .starts_with("unavailable")
    );

    proxy.come_back();
    let back = keel_testkit::eventually_async(Duration::from_secs(15), || async {
        (ready().await.status() == 200).then_some(())
    })
    .await;
    assert!(back.is_some(), "readyz recovers once the database is back");
}

#[tokio::test]
async fn an_answer_given_before_the_upload_ended_reaches_the_client() {
    let s = server().await;
    let client = reqwest::Client::new();
    let big = vec![b'x'; 4 * 1024 * 1024];
    for _ in 0..3 {
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            big.chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
        let resp = client
            .post(s.url("/nowhere"))
            .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
            .send()
            .await
            .expect("an answer, not a reset connection");
        assert_eq!(resp.status(), 404);
        assert!(
            resp.headers().get("connection").is_none(),
            "the connection stays usable"
        );
    }
}

#[tokio::test]
async fn past_the_cap_the_unread_rest_closes_the_connection() {
    let s = server().await;
    let big = vec![b'x'; 20 * 1024 * 1024];
    let resp = reqwest::Client::new()
        .post(s.url("/nowhere"))
        .body(big)
        .send()
        .await;
    // Either the answer with `Connection: close`, or (if the client was
    // still writing when the connection closed) a broken connection.
    if let Ok(resp) = resp {
        assert_eq!(resp.status(), 404);
        assert_eq!(resp.headers()["connection"], "close");
    }
}
