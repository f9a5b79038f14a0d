//! The operator console's test kit: operators made as `keel operator add`
//! makes them, signed in over HTTP with their password and TOTP code, and
//! a client that carries the session cookie and the CSRF token.

use keel_console::domain::operators;
use keel_platform::console::{Role, Roles};
use keel_platform::totp;
use keel_testkit::TestApp;
use reqwest::{Method, Response};
use serde_json::Value;

pub const PASSWORD: &str = "a long operator passphrase 7";

/// An operator: name and TOTP secret.
pub struct Operator {
    pub name: String,
    pub secret: Vec<u8>,
}

impl Operator {
    /// The code of the authenticator app `steps` steps from now.
    pub fn code(&self, steps: i64) -> String {
        let now = chrono::Utc::now().timestamp() + steps * 30;
        totp::code_at(&self.secret, u64::try_from(now).unwrap()).unwrap()
    }
}

/// accounts, svc and the console in one process: every area the console
/// has.
pub async fn every_area() -> TestApp {
    TestApp::builder()
        .service("accounts")
        .service("svc")
        .service("console")
        .spawn()
        .await
}

pub async fn operator(app: &TestApp, name: &str, roles: &[Role]) -> Operator {
    let p = app.platform();
    let added = operators::add(
        &p.db,
        &p.secrets,
        name,
        &Roles::of(roles.iter().copied()),
        Some(PASSWORD.to_owned()),
    )
    .await
    .unwrap();
    Operator {
        name: name.to_owned(),
        secret: totp::from_base32(&added.totp_base32).unwrap(),
    }
}

/// A signed-in console session.
pub struct Console<'a> {
    pub app: &'a TestApp,
    pub cookie: String,
    pub csrf: String,
}

pub async fn sign_in_raw(app: &TestApp, body: &Value) -> Response {
    app.http
        .post(app.root("console", "/console/v1/session"))
        .json(body)
        .send()
        .await
        .unwrap()
}

/// Signs `op` in with the current code.
pub async fn sign_in<'a>(app: &'a TestApp, op: &Operator) -> Console<'a> {
    let console = app.root("console", "");
    let s =
        keel_testkit::session::console(&app.http, &console, &op.name, PASSWORD, &op.secret).await;
    Console {
        app,
        cookie: s.cookie,
        csrf: s.csrf,
    }
}

impl Console<'_> {
    /// `method path` with the cookie and the CSRF token (and `body`).
    pub async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self
            .app
            .http
            .request(method, self.app.root("console", path))
            .header("cookie", &self.cookie)
            .header("x-console-csrf", &self.csrf);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.call(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(Method::POST, path, Some(body)).await
    }

    /// The audit entries of `action`.
    pub async fn audit(&self, action: &str) -> Vec<Value> {
        let (status, page) = self
            .get(&format!("/console/v1/audit?action={action}"))
            .await;
        assert_eq!(status, 200, "{page}");
        page["entries"].as_array().cloned().unwrap_or_default()
    }
}
