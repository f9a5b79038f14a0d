//! Signing in as a client does: the session cookie a response sets, and
//! the operator console's sign-in (name, password and the authenticator's
//! current code) over HTTP.

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// The `name=value` of the cookie the response's `Set-Cookie` sets (what a
/// client sends back in `Cookie`).
pub fn cookie(headers: &HeaderMap) -> String {
    headers
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .expect("a Set-Cookie header")
        .to_owned()
}

/// A signed-in console session: `cookie` goes with every request, `csrf`
/// as `x-console-csrf` with every one that changes something.
pub struct ConsoleSession {
    pub cookie: String,
    pub csrf: String,
}

/// The body of a sign-in as `name` with `password` and this moment's code
/// of the authenticator holding `secret`.
fn sign_in_body(name: &str, password: &str, secret: &[u8]) -> Value {
    let now = u64::try_from(chrono::Utc::now().timestamp()).expect("a time after 1970");
    let code = keel_platform::totp::code_at(secret, now).expect("a TOTP code");
    json!({ "name": name, "password": password, "code": code })
}

/// Signs `name` in at the operator console whose listener is `console` (its base
/// URL); panics unless it is let in.
pub async fn console(
    http: &reqwest::Client,
    console: &str,
    name: &str,
    password: &str,
    secret: &[u8],
) -> ConsoleSession {
    let url = format!("{}/console/v1/session", console.trim_end_matches('/'));
    let resp = http
        .post(url)
        .json(&sign_in_body(name, password, secret))
        .send()
        .await
        .expect("the console answers");
    assert_eq!(resp.status(), 200, "sign-in of {name}");
    let cookie = cookie(resp.headers());
    let body: Value = resp.json().await.expect("a JSON answer");
    ConsoleSession {
        cookie,
        csrf: body["csrf"].as_str().expect("a CSRF token").to_owned(),
    }
}
