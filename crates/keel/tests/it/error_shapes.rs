//! A client of one service never sees another service's error shape: every
//! route of every service (read from its own OpenAPI document) is sent bad
//! JSON, a wrong content type, an oversized body and a method it does not
//! have, with and without compression; every answer is a 4xx (or a success
//! for a route that reads no body), never a 5xx, and every error is in the
//! service's documented shape.

use keel_testkit::TestApp;
use keel_testkit::encoding::{ENCODINGS, fetch};
use reqwest::Method;
use serde_json::Value;

/// Whether `body` is an error in `service`'s documented shape.
fn in_shape(
    service: &str,
    path: &str,
    status: u16,
    ctype: &str,
    body: &[u8],
) -> Result<(), String> {
    // channel-web forwards /api/* to channel-api: those answer in its shape.
    if service == keel_channel::WEB && path.starts_with("/api") {
        return in_shape(keel_channel::API, path, status, ctype, body);
    }
    if service == keel_channel::WEB {
        return ctype
            .starts_with("text/html")
            .then_some(())
            .ok_or_else(|| format!("not HTML: {ctype}"));
    }
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON ({e})"))?;
    let o = v.as_object().ok_or("not an object")?;
    let string = |v: &Value| v.as_str().is_some_and(|s| !s.is_empty());
    let ok = match service {
        keel_accounts::NAME => {
            o.len() == 2
                && o.get("code").and_then(Value::as_str).is_some_and(|c| {
                    !c.is_empty() && c.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                })
                && o.get("message").is_some_and(string)
        }
        keel_usage_alerts::NAME => o.len() == 1 && o.get("error").is_some_and(string),
        keel_svc::NAME => {
            o.get("code").is_some_and(string)
                && o.get("message").is_some_and(string)
                && v["data"]["status"] == status
        }
        keel_channel::API => {
            let e = &v["error"];
            o.len() == 1
                && e["message"].is_string()
                && e["code"].as_i64().is_some_and(|c| c < 0)
                && e["data"]["code"].is_string()
                && e["data"]["httpStatus"] == status
        }
        keel_console::NAME => {
            o.get("code").and_then(Value::as_str).is_some_and(|c| {
                !c.is_empty() && c.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            }) && o.get("message").is_some_and(string)
        }
        other => return Err(format!("no shape known for {other}")),
    };
    ok.then_some(()).ok_or_else(|| "wrong shape".to_owned())
}

/// `path` with every `{param}` filled in.
fn concrete(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        out.push('1');
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

/// Every (method, path) the service documents.
async fn routes(app: &TestApp, s: &str) -> Vec<(Method, String)> {
    let doc: Value = app
        .http
        .get(app.root(s, "/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().cloned().unwrap_or_default() {
        for (method, _) in item.as_object().cloned().unwrap_or_default() {
            if let Ok(m) = method.to_ascii_uppercase().parse::<Method>() {
                out.push((m, concrete(&path)));
            }
        }
    }
    out
}

struct Probe {
    what: &'static str,
    content_type: Option<&'static str>,
    body: Vec<u8>,
}

fn probes() -> Vec<Probe> {
    vec![
        Probe {
            what: "no body",
            content_type: None,
            body: Vec::new(),
        },
        Probe {
            what: "bad JSON",
            content_type: Some("application/json"),
            body: b"{\"a\": ".to_vec(),
        },
        Probe {
            what: "a wrong content type",
            content_type: Some("text/plain"),
            body: b"hello".to_vec(),
        },
    ]
}

async fn check(
    app: &TestApp,
    s: &str,
    method: &Method,
    path: &str,
    what: &str,
    req: reqwest::RequestBuilder,
    encoding: &str,
) -> Vec<String> {
    let d = fetch(req, encoding).await;
    let ctype = d
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let _ = app;
    let mut problems = Vec::new();
    if d.status >= 500 {
        problems.push(format!(
            "{s} {method} {path} ({what}, {encoding}): {}",
            d.status
        ));
    } else if d.status >= 400
        && let Err(e) = in_shape(s, path, d.status, &ctype, &d.body)
    {
        problems.push(format!(
            "{s} {method} {path} ({what}, {encoding}): {} {e}: {}",
            d.status,
            String::from_utf8_lossy(&d.body)
        ));
    }
    problems
}

#[tokio::test]
async fn every_route_of_every_service_answers_bad_input_in_its_own_shape() {
    let app = TestApp::spawn().await;
    let mut problems = Vec::new();
    let mut probed = 0;
    for s in keel::services::http_names() {
        let all = routes(&app, s).await;
        assert!(!all.is_empty(), "{s} documents its routes");
        for (method, path) in &all {
            let url = app.root(s, path);
            for p in probes() {
                for enc in ENCODINGS {
                    let mut req = app.http.request(method.clone(), &url).body(p.body.clone());
                    if let Some(ct) = p.content_type {
                        req = req.header("content-type", ct);
                    }
                    problems.extend(check(&app, s, method, path, p.what, req, enc).await);
                    probed += 1;
                }
            }
            if matches!(
                *method,
                Method::POST | Method::PUT | Method::PATCH | Method::DELETE
            ) {
                let big = vec![b'a'; 2 * 1024 * 1024];
                let req = app
                    .http
                    .request(method.clone(), &url)
                    .header("content-type", "application/json")
                    .body(big);
                problems
                    .extend(check(&app, s, method, path, "an oversized body", req, "gzip").await);
                probed += 1;
            }
            // A method the path does not have.
            let others = [
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
                Method::POST,
                Method::GET,
            ];
            if let Some(m) = others
                .iter()
                .find(|m| !all.iter().any(|(am, ap)| ap == path && am == *m))
            {
                let req = app.http.request(m.clone(), &url);
                for enc in ENCODINGS {
                    problems.extend(
                        check(
                            &app,
                            s,
                            m,
                            path,
                            "an unknown method",
                            req.try_clone().unwrap(),
                            enc,
                        )
                        .await,
                    );
                    probed += 1;
                }
            }
        }
    }
    assert!(probed > 300, "only {probed} probes");
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[tokio::test]
async fn every_services_openapi_document_reads_the_same_in_every_encoding() {
    let app = TestApp::spawn().await;
    for s in keel::services::http_names() {
        let mut docs = Vec::new();
        for enc in ENCODINGS {
            let d = fetch(app.http.get(app.root(s, "/openapi.json")), enc).await;
            assert_eq!(d.status, 200, "{s} {enc}");
            // Answers are gzipped from 4 KiB; brotli only for static files.
            let large = d.body.len() >= usize::from(keel_platform::http::COMPRESS_FROM);
            let expected = (enc == "gzip" && large).then_some("gzip");
            assert_eq!(d.encoding.as_deref(), expected, "{s} for {enc}");
            docs.push(d.json());
        }
        assert!(docs.windows(2).all(|w| w[0] == w[1]), "{s}");
    }
}
