//! accounts on two nodes sharing one PostgreSQL and one Redis: sessions
//! are cached on each node, and a revocation on one node takes effect on
//! the other at once.

use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use serde_json::Value;

use crate::KEEL;

/// The web page's origin in the passkey ceremonies.
const ORIGIN: &str = "http://localhost:5173";

struct Node {
    p: KeelProcess,
}

impl Node {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.p.url("accounts"))
    }
}

async fn node(db: &TestDb, dir: &std::path::Path) -> Node {
    let env = vec![
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("REDIS_URL", keel_testkit::redis_url()),
        ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        // Long enough that only the shared epoch can explain a fresh read.
        ("KEEL_ACCOUNTS_SESSION_CACHE_SECS", "600".to_owned()),
        ("KEEL_ACCOUNTS_WEBAUTHN_RP_ID", "localhost".to_owned()),
        ("KEEL_ACCOUNTS_WEBAUTHN_ORIGINS", ORIGIN.to_owned()),
    ];
    Node {
        p: KeelProcess::serve(command(KEEL, dir, &env, &["serve", "accounts"])).await,
    }
}

async fn status(url: &str, token: &str) -> u16 {
    reqwest::Client::new()
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn register(n: &Node, name: &str) -> (String, Value) {
    let r: Value = reqwest::Client::new()
        .post(n.url("/auth/register"))
        .form(&[
            ("username", name),
            ("email", &format!("{name}@example.com")),
            ("password", "correct horse battery"),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (r["accessToken"].as_str().expect("a token").to_owned(), r)
}

/// The session id (`sid` claim) of an access token.
fn session_of(token: &str) -> String {
    use base64::Engine;
    let payload = token.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    let claims: Value = serde_json::from_slice(&bytes).expect("JSON claims");
    claims["sid"].as_str().expect("a sid claim").to_owned()
}

async fn login(n: &Node, name: &str, password: &str) -> String {
    let r: Value = reqwest::Client::new()
        .post(n.url("/auth/login"))
        .form(&[("login", name), ("password", password)])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    r["accessToken"].as_str().expect("a token").to_owned()
}

#[tokio::test]
async fn a_revocation_on_one_node_takes_effect_on_every_node_at_once() {
    let db = TestDb::postgres().await;
    let dir = tempfile::tempdir().unwrap();
    let a = node(&db, dir.path()).await;
    let b = node(&db, dir.path()).await;
    let name = format!("n{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let (token, _) = register(&a, &name).await;

    // Sign-out on A; B had the session cached.
    assert_eq!(status(&b.url("/account"), &token).await, 200);
    assert_eq!(status(&b.url("/account"), &token).await, 200);
    let out = reqwest::Client::new()
        .post(a.url("/auth/logout"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 200);
    assert_eq!(
        status(&b.url("/account"), &token).await,
        401,
        "B still served a signed-out session"
    );

    // Session revoke (DELETE /account/sessions/{id}) on A.
    let t1 = login(&a, &name, "correct horse battery").await;
    let t2 = login(&a, &name, "correct horse battery").await;
    assert_eq!(status(&b.url("/account"), &t2).await, 200);
    let id = session_of(&t2);
    let revoked = reqwest::Client::new()
        .delete(a.url(&format!("/account/sessions/{id}")))
        .bearer_auth(&t1)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200, "{}", revoked.text().await.unwrap());
    assert_eq!(
        status(&b.url("/account"), &t2).await,
        401,
        "B still served a revoked session"
    );
    assert_eq!(
        status(&b.url("/account"), &t1).await,
        200,
        "the other session lives on"
    );
    let live = t1;

    // Password change on A ends the other sessions everywhere.
    let t3 = login(&a, &name, "correct horse battery").await;
    assert_eq!(status(&b.url("/account"), &t3).await, 200);
    let changed = reqwest::Client::new()
        .put(a.url("/account/change-password"))
        .bearer_auth(&live)
        .form(&[
            ("oldPassword", "correct horse battery"),
            ("newPassword", "another good passphrase"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(changed.status(), 200, "{}", changed.text().await.unwrap());
    assert_eq!(
        status(&b.url("/account"), &t3).await,
        401,
        "B still served a session the password change ended"
    );

    // A ban by the operator's command.
    let t4 = login(&a, &name, "another good passphrase").await;
    assert_eq!(status(&b.url("/account"), &t4).await, 200);
    let mut ban = KeelProcess::spawn(command(
        KEEL,
        dir.path(),
        &[
            ("KEEL_DATA_DIR", dir.path().display().to_string()),
            ("DATABASE_URL", db.url.clone()),
            ("REDIS_URL", keel_testkit::redis_url()),
        ],
        &["accounts", "user", "ban", &name],
    ));
    let done = ban.wait(std::time::Duration::from_secs(30)).await;
    assert!(done.success(), "{}", ban.stderr());
    assert_eq!(status(&b.url("/account"), &t4).await, 403);
    assert_eq!(status(&a.url("/account"), &t4).await, 403);
}

#[tokio::test]
async fn a_deleted_users_unexpired_token_is_refused_by_the_other_node_at_once() {
    let db = TestDb::postgres().await;
    let dir = tempfile::tempdir().unwrap();
    let a = node(&db, dir.path()).await;
    let b = node(&db, dir.path()).await;
    let name = format!("d{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let (token, _) = register(&a, &name).await;
    // B has the user's session cached (for ten minutes, by its settings).
    assert_eq!(status(&b.url("/account"), &token).await, 200);
    assert_eq!(status(&b.url("/account"), &token).await, 200);
    let deleted = reqwest::Client::new()
        .delete(a.url("/account"))
        .bearer_auth(&token)
        .form(&[("password", "correct horse battery")])
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200, "{}", deleted.text().await.unwrap());
    assert_eq!(
        status(&b.url("/account"), &token).await,
        401,
        "B still served a deleted user"
    );
    assert_eq!(status(&a.url("/account"), &token).await, 401);
}

async fn post_json(url: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
    let mut req = reqwest::Client::new().post(url).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_passkey_ceremony_started_on_one_node_finishes_on_the_other_once() {
    use keel_testkit::authenticator::{Answer, SoftPasskey};
    let db = TestDb::postgres().await;
    let dir = tempfile::tempdir().unwrap();
    let a = node(&db, dir.path()).await;
    let b = node(&db, dir.path()).await;
    let name = format!("p{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let (token, _) = register(&a, &name).await;
    let browser = Answer::on(ORIGIN);

    // Registration: options from A, the answer to B.
    let proof = serde_json::json!({"password": "correct horse battery"});
    let (status, options) = post_json(
        &a.url("/account/passkeys/registration"),
        Some(&token),
        &proof,
    )
    .await;
    assert_eq!(status, 200, "{options}");
    let (mut key, credential) = SoftPasskey::create(&options, &browser);
    let body = serde_json::json!({"ceremonyId": options["ceremonyId"], "credential": credential});
    let (status, added) = post_json(&b.url("/account/passkeys"), Some(&token), &body).await;
    assert_eq!(status, 201, "{added}");

    // Sign-in: options from B, the answer to A; the same answer again to
    // B is refused (the ceremony was used on A).
    let (_, options) = post_json(
        &b.url("/auth/passkey/options"),
        None,
        &serde_json::json!({}),
    )
    .await;
    let answer = key.get(&options, &browser);
    let body = serde_json::json!({"ceremonyId": options["ceremonyId"], "credential": answer});
    let (status, signed_in) = post_json(&a.url("/auth/passkey"), None, &body).await;
    assert_eq!(status, 200, "{signed_in}");
    assert_eq!(signed_in["user"]["username"], name.as_str());
    let (status, again) = post_json(&b.url("/auth/passkey"), None, &body).await;
    assert_eq!(
        (status, again["code"].as_str()),
        (400, Some("INVALID_CEREMONY")),
        "{again}"
    );
}
