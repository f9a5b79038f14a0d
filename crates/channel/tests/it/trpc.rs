//! tRPC over HTTP: envelopes, methods, batching, errors, the transformer,
//! the OpenAPI document.

use serde_json::{Value, json};

use crate::helpers::{Channel, ORIGIN, SETUP_CODE, finish};

#[tokio::test]
async fn a_query_answers_in_the_result_envelope() {
    let ch = Channel::start().await;
    let r = ch.query("stream.isLive", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"result": {"data": {"isLive": false, "liveStartedAt": null, "viewerCount": 0}}})
    );
    assert_eq!(r.headers["content-type"], "application/json");
}

#[tokio::test]
async fn an_unknown_procedure_is_not_found_with_its_path() {
    let ch = Channel::start().await;
    let r = ch.query("stream.nope", None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body["error"]["code"], -32004);
    assert_eq!(r.body["error"]["data"]["code"], "NOT_FOUND");
    assert_eq!(r.body["error"]["data"]["httpStatus"], 404);
    assert_eq!(r.body["error"]["data"]["path"], "stream.nope");
    assert!(r.body["error"]["message"].is_string());
}

#[tokio::test]
async fn the_wrong_method_is_method_not_supported() {
    let ch = Channel::start().await;
    let r = ch.mutate("stream.isLive", json!({})).await;
    assert_eq!(
        (r.status, r.code()),
        (405, "METHOD_NOT_SUPPORTED"),
        "{}",
        r.text
    );
    assert_eq!(r.body["error"]["code"], -32005);
    assert_eq!(r.body["error"]["data"]["path"], "stream.isLive");
    assert_eq!(
        r.headers["allow"], "GET, HEAD",
        "a query says what it takes"
    );
    let r = ch.query("setup.complete", None).await;
    assert_eq!((r.status, r.code()), (405, "METHOD_NOT_SUPPORTED"));
    assert_eq!(r.headers["allow"], "POST");
    for (method, path, allow) in [
        ("OPTIONS", "channel.update", "POST"),
        ("PUT", "stream.isLive", "GET, HEAD"),
        ("DELETE", "nope.nothing", "GET, HEAD, POST"),
    ] {
        let req = ch.app.http.request(
            method.parse().unwrap(),
            ch.url(&format!("/api/trpc/{path}")),
        );
        let r = finish(req.send().await.unwrap()).await;
        assert_eq!(
            (r.status, r.code()),
            (405, "METHOD_NOT_SUPPORTED"),
            "{method} {path}"
        );
        assert_eq!(r.headers["allow"], allow, "{method} {path}");
    }
    let head = ch
        .app
        .http
        .head(ch.url("/api/trpc/stream.isLive"))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200, "HEAD asks a query without its body");
}

#[tokio::test]
async fn an_input_that_is_not_an_object_is_bad_request() {
    let ch = Channel::start().await;
    ch.set_up().await;
    for input in [json!([]), json!("title"), json!(3)] {
        let r = ch.mutate("channel.update", input.clone()).await;
        assert_eq!(
            (r.status, r.code()),
            (400, "BAD_REQUEST"),
            "{input}: {}",
            r.text
        );
    }
    assert_eq!(
        ch.mutate("channel.update", json!(null)).await.status,
        200,
        "null is no change"
    );
}

#[tokio::test]
async fn a_batch_answers_an_array_and_207_when_outcomes_differ() {
    let ch = Channel::start().await;
    let url = |q: &str| ch.url(&format!("/api/trpc/{q}"));
    let r = finish(
        ch.app
            .http
            .get(url("stream.isLive,setup.status?batch=1&input=%7B%7D"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let items = r.body.as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["result"]["data"]["isLive"], false);
    assert_eq!(items[1]["result"]["data"]["needsSetup"], true);

    // One public, one needing the owner: mixed.
    let r = finish(
        ch.app
            .http
            .get(url("stream.isLive,panels.list?batch=1"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 207, "{}", r.text);
    let items = r.body.as_array().unwrap();
    assert!(items[0]["result"].is_object());
    assert_eq!(items[1]["error"]["data"]["code"], "UNAUTHORIZED");
    assert_eq!(items[1]["error"]["data"]["path"], "panels.list");

    // Mutations batch by POST with inputs keyed by position.
    let input = json!({"0": {"code": SETUP_CODE, "email": "a@example.com", "password": "correct horse battery", "title": "T"}, "1": {}});
    let r = finish(
        ch.app
            .http
            .post(url("setup.complete,stream.provision?batch=1"))
            .header("origin", ORIGIN)
            .json(&input)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 207, "{}", r.text);
    let items = r.body.as_array().unwrap();
    assert_eq!(items[0]["result"]["data"]["signedIn"], true);
    assert_eq!(
        items[1]["error"]["data"]["code"], "UNAUTHORIZED",
        "the batch's cookie comes back after it"
    );
}

#[tokio::test]
async fn a_batch_over_the_limit_is_refused_whole_and_runs_nothing() {
    let ch = Channel::with(&[("KEEL_CHANNEL_TRPC_MAX_BATCH", "4".into())]).await;
    let names = ["stream.isLive"; 5].join(",");
    let r = finish(
        ch.app
            .http
            .get(ch.url(&format!("/api/trpc/{names}?batch=1&input=%7B%7D")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"), "{}", r.text);
    assert_eq!(
        r.body["error"]["message"],
        "Batch call exceeds maximum size"
    );
    assert!(r.body["error"]["data"].get("path").is_none(), "{}", r.text);
    let names = ["stream.isLive"; 4].join(",");
    let r = finish(
        ch.app
            .http
            .get(ch.url(&format!("/api/trpc/{names}?batch=1&input=%7B%7D")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body.as_array().map(Vec::len), Some(4));
}

#[tokio::test]
async fn input_that_is_not_json_is_a_parse_error_and_a_bad_field_is_named() {
    let ch = Channel::start().await;
    let r = finish(
        ch.app
            .http
            .get(ch.url("/api/trpc/stream.isLive?input=%7Bnope"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "PARSE_ERROR"), "{}", r.text);
    assert_eq!(r.body["error"]["code"], -32700);
    let r = ch
        .mutate(
            "setup.complete",
            json!({"code": SETUP_CODE, "email": "nope", "password": "correct horse battery", "title": "T"}),
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"), "{}", r.text);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("email"),
        "{}",
        r.text
    );
    let r = ch
        .mutate(
            "setup.complete",
            json!({"code": SETUP_CODE, "email": "a@example.com", "password": "short", "title": "T"}),
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"));
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("password")
    );
    let r = ch
        .mutate(
            "setup.complete",
            json!({"code": SETUP_CODE, "email": "a@example.com", "password": "correct horse battery"}),
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"));
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("title"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn with_superjson_inputs_and_outputs_are_wrapped() {
    let ch = Channel::with(&[("KEEL_CHANNEL_TRPC_TRANSFORMER", "superjson".into())]).await;
    let r = ch.query("stream.isLive", Some(json!({"json": null}))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.data()["json"]["isLive"], false);
    let r = ch
        .mutate(
            "setup.complete",
            json!({"json": {"code": SETUP_CODE, "email": "a@example.com", "password": "correct horse battery", "title": "T"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.data()["json"]["signedIn"], true);
}

pub const PROCEDURES: [&str; 20] = [
    "setup.status",
    "setup.complete",
    "channel.getInfo",
    "channel.update",
    "profile.update",
    "stream.isLive",
    "stream.provision",
    "stream.credentials",
    "stream.goLive",
    "stream.end",
    "stream.viewerToken",
    "panels.list",
    "panels.create",
    "panels.update",
    "panels.delete",
    "panels.reorder",
    "analytics.viewers",
    "emotes.list",
    "stream.isLive",
    "channel.getInfo",
];

#[tokio::test]
async fn every_procedure_and_route_is_in_the_openapi_document() {
    let ch = Channel::start().await;
    let doc: Value = ch
        .app
        .http
        .get(ch.app.root(keel_channel::API, "/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = doc["paths"].as_object().unwrap();
    for p in PROCEDURES {
        let item = &paths[&format!("/api/trpc/{p}")];
        assert!(item["get"].is_object() || item["post"].is_object(), "{p}");
    }
    assert!(paths["/api/trpc/stream.isLive"]["get"]["responses"]["200"].is_object());
    assert!(paths["/api/trpc/setup.complete"]["post"]["requestBody"].is_object());
    for p in [
        "/api/auth/sign-in",
        "/api/auth/sign-out",
        "/api/auth/session",
        "/api/webhooks/stream",
        "/api/upload/logo",
        "/api/logo/{file}",
    ] {
        assert!(paths.contains_key(p), "{p}");
    }
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
    // Who may call what is declared per operation.
    assert_eq!(
        paths["/api/trpc/stream.credentials"]["get"]["security"],
        json!([{"session": []}])
    );
    assert_eq!(
        paths["/api/trpc/stream.isLive"]["get"]["security"],
        json!([])
    );
    assert_eq!(
        paths["/api/webhooks/stream"]["post"]["security"],
        json!([{"webhook_key": [], "webhook_signature": []}])
    );
}

/// A request with `trpc-accept: application/jsonl` from a client that
/// takes gzip and brotli.
async fn jsonl(ch: &Channel, path_and_query: &str) -> (u16, reqwest::header::HeaderMap, String) {
    let r = ch
        .app
        .http
        .get(ch.url(&format!("/api/trpc/{path_and_query}")))
        .header("trpc-accept", "application/jsonl")
        .header("accept-encoding", "gzip, br")
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.text().await.unwrap())
}

/// What `@trpc/server` 11 answers to the same batch of one `stream.isLive`
/// with `trpc-accept: application/jsonl` (captured from it).
pub const ISLIVE_JSONL: &str = concat!(
    r#"{"0":[[0],[null,0,0]]}"#,
    "\n",
    r#"[0,0,[[{"result":0}],["result",0,1]]]"#,
    "\n",
    r#"[1,0,[[{"data":0}],["data",0,2]]]"#,
    "\n",
    r#"[2,0,[[{"isLive":false,"liveStartedAt":null,"viewerCount":0}]]]"#,
    "\n",
);

#[tokio::test]
async fn a_streamed_batch_is_trpcs_jsonl_byte_for_byte_and_never_compressed() {
    let ch = Channel::start().await;
    let (status, headers, body) = jsonl(&ch, "stream.isLive?batch=1&input=%7B%7D").await;
    assert_eq!(status, 200);
    assert_eq!(body, ISLIVE_JSONL);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["vary"], "trpc-accept, accept");
    assert!(headers.get("content-encoding").is_none(), "{headers:?}");
    // An error after the head: its own line, the status stays 200.
    let (status, _, body) = jsonl(&ch, "stream.isLive,no.such?batch=1&input=%7B%7D").await;
    assert_eq!(status, 200);
    let lines: Vec<serde_json::Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        json!({"0": [[0], [null, 0, 0]], "1": [[0], [null, 0, 1]]})
    );
    let error = lines
        .iter()
        .find(|l| l[0] == 1)
        .expect("the unknown procedure's line");
    assert_eq!(error[2][0][0]["error"]["data"]["code"], "NOT_FOUND");
    assert_eq!(error[2][0][0]["error"]["data"]["path"], "no.such");
    assert_eq!(error[2][0][0]["error"]["code"], -32004);
    assert!(!body.contains("stack"));
}

#[tokio::test]
async fn a_streamed_request_must_be_a_batch_as_with_trpc() {
    let ch = Channel::start().await;
    let r = ch
        .app
        .http
        .get(ch.url("/api/trpc/stream.isLive"))
        .header("trpc-accept", "application/jsonl")
        .send()
        .await
        .unwrap();
    let (status, body) = (r.status().as_u16(), r.text().await.unwrap());
    assert_eq!(status, 400, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["error"]["message"],
        "Streaming requests must be batched (you can do a batch of 1)"
    );
    assert_eq!(v["error"]["data"]["code"], "BAD_REQUEST");
}

#[tokio::test]
async fn with_superjson_each_streamed_line_and_each_error_is_transformed() {
    let ch = Channel::with(&[("KEEL_CHANNEL_TRPC_TRANSFORMER", "superjson".into())]).await;
    let (_, _, body) = jsonl(&ch, "stream.isLive?batch=1&input=%7B%7D").await;
    let wrapped: String = ISLIVE_JSONL
        .lines()
        .map(|l| format!("{{\"json\":{l}}}\n"))
        .collect();
    assert_eq!(body, wrapped);
    let r = ch.query("no.such", None).await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.body["error"]["json"]["data"]["code"], "NOT_FOUND",
        "{}",
        r.text
    );
    assert_eq!(r.body["error"]["json"]["code"], -32004);
}

#[tokio::test]
async fn a_client_that_leaves_mid_stream_costs_nothing() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    ch.event("call.live_started", json!({})).await;
    ch.until_live(true).await;
    // The provider stalls the playlist read viewerToken makes while live
    // for 2 s.
    ch.stream.stall_path(
        "/api/v2/video/call/livestream/channel",
        std::time::Duration::from_secs(2),
        1,
    );
    let mut r = ch
        .app
        .http
        .get(ch.url("/api/trpc/stream.isLive,stream.viewerToken?batch=1&input=%7B%7D"))
        .header("trpc-accept", "application/jsonl")
        .send()
        .await
        .unwrap();
    let head = r.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&head).starts_with(r#"{"0":"#));
    drop(r);
    // Nothing the dropped call held is stuck: other calls answer at once,
    // and the playlist read it started (shared by every viewer arriving
    // meanwhile) ends when the provider answers, not at a timeout.
    let started = std::time::Instant::now();
    assert_eq!(ch.query("stream.isLive", None).await.status, 200);
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    let again = ch.query("stream.viewerToken", None).await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(
        !ch.app
            .metrics()
            .await
            .contains("keel_http_body_panics_total{"),
        "no panic"
    );
}
