//! Passkeys in Chromium: a page on `http://localhost:<port>` (a secure
//! context; `localhost` is the relying party) calls keel's options and
//! `navigator.credentials.create` / `.get`, answered by WebDriver's virtual
//! authenticator; the page's server passes `/a/...` and `/b/...` to two
//! keel nodes on one database, as a load balancer would.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use serde_json::{Value, json};

use crate::harness::{Browser, KEEL, PASSWORD};

const PAGE: &str = include_str!("passkeys.html");

/// The page and its way to the nodes.
struct Page {
    origin: String,
    nodes: Vec<KeelProcess>,
    _db: TestDb,
    _dir: tempfile::TempDir,
}

async fn forward(
    State(nodes): State<Arc<Vec<String>>>,
    Path((node, rest)): Path<(String, String)>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(base) = (match node.as_str() {
        "a" => nodes.first(),
        "b" => nodes.get(1),
        _ => None,
    }) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut req = reqwest::Client::new()
        .request(method, format!("{base}/{rest}"))
        .body(body);
    for name in [
        header::CONTENT_TYPE,
        header::AUTHORIZATION,
        header::USER_AGENT,
    ] {
        if let Some(v) = headers.get(&name) {
            req = req.header(name, v);
        }
    }
    match req.send().await {
        Ok(r) => {
            let status = r.status();
            let kind = r.headers().get(header::CONTENT_TYPE).cloned();
            let bytes = r.bytes().await.unwrap_or_default();
            let mut out = (status, bytes).into_response();
            if let Some(k) = kind {
                out.headers_mut().insert(header::CONTENT_TYPE, k);
            }
            out
        }
        Err(_) => StatusCode::BAD_GATEWAY.into_response(),
    }
}

impl Page {
    /// `nodes` keel nodes serving accounts with passkeys for this page.
    async fn start(db: TestDb, dir: tempfile::TempDir, nodes: usize) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://localhost:{}", listener.local_addr().unwrap().port());
        let env = vec![
            ("KEEL_DATA_DIR", dir.path().display().to_string()),
            ("DATABASE_URL", db.url.clone()),
            ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
            ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
            ("KEEL_ACCOUNTS_WEBAUTHN_RP_ID", "localhost".to_owned()),
            ("KEEL_ACCOUNTS_WEBAUTHN_ORIGINS", origin.clone()),
        ];
        let mut started = Vec::new();
        for _ in 0..nodes {
            let cmd = command(KEEL, dir.path(), &env, &["serve", "accounts"]);
            started.push(KeelProcess::serve(cmd).await);
        }
        let urls: Vec<String> = started
            .iter()
            .map(|n| n.url("accounts").to_owned())
            .collect();
        let app = axum::Router::new()
            .route("/", axum::routing::get(|| async { Html(PAGE) }))
            .route("/{node}/{*rest}", axum::routing::any(forward))
            .with_state(Arc::new(urls));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            origin,
            nodes: started,
            _db: db,
            _dir: dir,
        }
    }

    /// Registers `name` on node a; its access token.
    async fn register(&self, name: &str) -> String {
        let r: Value = reqwest::Client::new()
            .post(format!("{}/auth/register", self.nodes[0].url("accounts")))
            .json(&json!({"username": name, "email": format!("{name}@example.com"), "password": PASSWORD}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r["accessToken"].as_str().expect("a token").to_owned()
    }

    async fn account_status(&self, token: &str) -> u16 {
        reqwest::Client::new()
            .get(format!("{}/account", self.nodes[0].url("accounts")))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }
}

/// Runs a step of the page (an async function on `window`); its answer.
async fn step(browser: &Browser, call: &str, args: Vec<Value>) -> Value {
    browser
        .client
        .execute(&format!("return window.{call}(...arguments)"), args)
        .await
        .unwrap_or_else(|e| panic!("{call}: {e}"))
}

async fn open(page: &Page) -> Browser {
    let browser = Browser::start(1000, 640).await;
    browser.add_virtual_authenticator().await;
    browser.goto(&format!("{}/", page.origin)).await;
    browser
}

#[tokio::test]
async fn a_person_adds_a_passkey_signs_out_and_signs_in_with_it_without_a_username() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let page = Page::start(db, dir, 1).await;
    let token = page.register("ada").await;
    let browser = open(&page).await;

    let added = step(
        &browser,
        "addPasskey",
        vec![json!("a"), json!("a"), json!(token), json!(PASSWORD)],
    )
    .await;
    assert_eq!(added["status"], 201, "{added}");
    let out = step(&browser, "signOut", vec![json!("a"), json!(token)]).await;
    assert_eq!(out["status"], 200, "{out}");
    assert_eq!(page.account_status(&token).await, 401);

    let signed_in = step(&browser, "signInWithPasskey", vec![json!("a"), json!("a")]).await;
    assert_eq!(signed_in["status"], 200, "{signed_in}");
    assert_eq!(signed_in["body"]["user"]["username"], "ada");
    let fresh = signed_in["body"]["accessToken"].as_str().unwrap();
    assert_eq!(page.account_status(fresh).await, 200);
    let shot = browser.screenshot("passkeys-one-node").await;
    assert!(shot.exists());
}

#[tokio::test]
async fn a_passkey_ceremony_in_chromium_finishes_on_a_second_node() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::postgres().await;
    let page = Page::start(db, dir, 2).await;
    let token = page.register("grace").await;
    let browser = open(&page).await;

    let added = step(
        &browser,
        "addPasskey",
        vec![json!("a"), json!("b"), json!(token), json!(PASSWORD)],
    )
    .await;
    assert_eq!(added["status"], 201, "{added}");
    for (from, to) in [("a", "b"), ("b", "a")] {
        let signed_in = step(&browser, "signInWithPasskey", vec![json!(from), json!(to)]).await;
        assert_eq!(signed_in["status"], 200, "{from} -> {to}: {signed_in}");
        assert_eq!(signed_in["body"]["user"]["username"], "grace");
    }
    let shot = browser.screenshot("passkeys-two-nodes").await;
    assert!(shot.exists());
}
