//! `/api/*` through channel-web: the same answers as channel-api gives,
//! cookies both ways, bodies streamed within a limit, forwarding headers
//! that cannot be spoofed, and failures in the tRPC envelope.

use serde_json::{Value, json};

use crate::helpers::{Channel, EMAIL, ORIGIN, PASSWORD, SETUP_CODE, finish};

#[tokio::test]
async fn the_session_cookie_is_set_and_sent_through_the_web_origin() {
    let ch = Channel::with_web(&[]).await;
    let r = finish(
        ch.app
            .http
            .post(ch.web("/api/trpc/setup.complete"))
            .header("origin", ORIGIN)
            .json(&json!({"code": SETUP_CODE, "email": EMAIL, "password": PASSWORD, "title": "T"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let cookie = keel_testkit::session::cookie(&r.headers);
    let session = |cookie: Option<String>| {
        let mut req = ch.app.http.get(ch.web("/api/auth/session"));
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        req.send()
    };
    let s: Value = session(Some(cookie.clone()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(s["owner"]["email"], EMAIL);
    let out = ch
        .app
        .http
        .post(ch.web("/api/auth/sign-out"))
        .header("origin", ORIGIN)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 200);
    assert!(
        out.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    let s: Value = session(Some(cookie)).await.unwrap().json().await.unwrap();
    assert_eq!(s["owner"], Value::Null, "ended server-side");
}

#[tokio::test]
async fn every_method_gets_the_answer_the_api_gives() {
    let ch = Channel::with_web(&[]).await;
    ch.set_up().await;
    let input = json!({"0": null}).to_string();
    let cases: Vec<(reqwest::Method, String)> = vec![
        (reqwest::Method::GET, "/api/trpc/stream.isLive".to_owned()),
        (
            reqwest::Method::GET,
            format!("/api/trpc/stream.isLive,setup.status?batch=1&input={input}"),
        ),
        (reqwest::Method::GET, "/api/trpc/panels.list".to_owned()),
        (reqwest::Method::POST, "/api/trpc/panels.create".to_owned()),
        (reqwest::Method::PUT, "/api/trpc/panels.create".to_owned()),
        (reqwest::Method::PATCH, "/api/trpc/stream.isLive".to_owned()),
        (
            reqwest::Method::DELETE,
            "/api/trpc/stream.isLive".to_owned(),
        ),
        (reqwest::Method::GET, "/api/nowhere".to_owned()),
    ];
    for (method, path) in cases {
        let send = |base: String| {
            let mut req = ch
                .app
                .http
                .request(method.clone(), format!("{base}{path}"))
                .header("origin", ORIGIN)
                .header("cookie", ch.cookie_header().unwrap());
            if method != reqwest::Method::GET {
                req = req.json(&json!({"title": "Schedule"}));
            }
            req.send()
        };
        let via_web = finish(send(ch.web("")).await.unwrap()).await;
        let direct = finish(send(ch.url("")).await.unwrap()).await;
        assert_eq!(
            via_web.status, direct.status,
            "{method} {path}: {}",
            via_web.text
        );
        let strip = |mut v: Value| {
            // Panels created by the two calls differ in id and position only.
            if let Some(o) = v.pointer_mut("/result/data").and_then(Value::as_object_mut) {
                o.remove("id");
                o.remove("position");
            }
            v
        };
        assert_eq!(strip(via_web.body), strip(direct.body), "{method} {path}");
        assert_eq!(
            via_web.headers.get("content-type"),
            direct.headers.get("content-type"),
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_whether_declared_or_streamed() {
    let ch = Channel::with_web(&[]).await;
    ch.set_up().await;
    let big = vec![b'x'; 3 * 1024 * 1024];
    let r = finish(
        ch.app
            .http
            .post(ch.web("/api/trpc/panels.create"))
            .header("content-type", "application/json")
            .body(big.clone())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (r.status, r.code()),
        (413, "PAYLOAD_TOO_LARGE"),
        "{}",
        r.text
    );
    assert_eq!(r.body["error"]["data"]["path"], "panels.create");
    // A well-formed start, so the API keeps reading: the proxy cuts it off.
    let head = b"--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n".to_vec();
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = std::iter::once(Ok(head))
        .chain(big.chunks(64 * 1024).map(|c| Ok(c.to_vec())))
        .collect();
    let r = finish(
        ch.app
            .http
            .post(ch.web("/api/upload/logo"))
            .header("origin", ORIGIN)
            .header("cookie", ch.cookie_header().unwrap())
            .header("content-type", "multipart/form-data; boundary=x")
            .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (r.status, r.code()),
        (413, "PAYLOAD_TOO_LARGE"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn a_spoofed_forwarded_for_does_not_escape_the_sign_in_limit() {
    let ch = Channel::with_web(&[]).await;
    ch.set_up().await;
    let mut last = 0;
    for i in 0..21 {
        let r = ch
            .app
            .http
            .post(ch.web("/api/auth/sign-in"))
            .header("origin", ORIGIN)
            .header("x-forwarded-for", format!("10.0.0.{i}"))
            .json(&json!({"email": format!("nobody{i}@example.com"), "password": "wrong password"}))
            .send()
            .await
            .unwrap();
        last = r.status().as_u16();
    }
    assert_eq!(last, 429, "the 21st attempt from one address is limited");
}

#[tokio::test]
async fn when_the_api_is_down_api_calls_answer_502_in_the_trpc_envelope() {
    let ch = Channel::with_web(&[("KEEL_CHANNEL_API_URL", "http://127.0.0.1:9".to_owned())]).await;
    let r = ch.page("/api/trpc/stream.isLive").await;
    assert_eq!((r.status, r.code()), (502, "BAD_GATEWAY"), "{}", r.text);
    assert_eq!(r.body["error"]["data"]["path"], "stream.isLive");
    assert_eq!(r.body["error"]["code"], -32603);
    let r = ch.page("/api/auth/session").await;
    assert_eq!((r.status, r.code()), (502, "BAD_GATEWAY"));
    let r = ch.page("/setup").await;
    assert_eq!(r.status, 200, "the pages still answer");
}

#[tokio::test]
async fn an_api_that_does_not_answer_in_time_gives_504() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            open.push(s);
        }
    });
    let ch = Channel::with_web(&[
        ("KEEL_CHANNEL_API_URL", format!("http://{addr}")),
        ("KEEL_CHANNEL_PROXY_TIMEOUT_SECS", "1".to_owned()),
    ])
    .await;
    let r = ch.page("/api/trpc/stream.isLive").await;
    assert_eq!((r.status, r.code()), (504, "GATEWAY_TIMEOUT"), "{}", r.text);
    held.abort();
}

#[tokio::test]
async fn a_streamed_trpc_batch_comes_through_the_web_origin_unbuffered() {
    let ch = Channel::with_web(&[]).await;
    let r = ch
        .app
        .http
        .get(ch.web("/api/trpc/stream.isLive?batch=1&input=%7B%7D"))
        .header("trpc-accept", "application/jsonl")
        .header("accept-encoding", "gzip, br")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("content-encoding").is_none());
    assert_eq!(r.text().await.unwrap(), crate::trpc::ISLIVE_JSONL);
}
