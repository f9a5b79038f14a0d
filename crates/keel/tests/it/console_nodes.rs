//! A ban from the console reaches every node at once: two processes on
//! one PostgreSQL and one Redis, the console on the first; the user's
//! session is cached on the second, which refuses it from the ban's next
//! request and lets it in again from the lift's.

use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, add_operator, command};
use keel_testkit::session::{self, ConsoleSession};
use serde_json::{Value, json};

use crate::KEEL;

fn env(db: &TestDb, dir: &std::path::Path, prefix: &str) -> Vec<(&'static str, String)> {
    vec![
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("REDIS_URL", keel_testkit::redis_url()),
        ("KEEL_REDIS_PREFIX", prefix.to_owned()),
        ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_CONSOLE_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        // Long enough that only the shared epoch can explain a fresh read.
        ("KEEL_ACCOUNTS_SESSION_CACHE_SECS", "600".to_owned()),
    ]
}

async fn status(url: String, token: &str) -> u16 {
    reqwest::Client::new()
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_ban_from_the_console_is_refused_on_the_other_node_at_once_and_lifted_as_fast() {
    let db = TestDb::postgres().await;
    let dir = tempfile::tempdir().unwrap();
    let prefix = format!("keel-test:{}:", uuid::Uuid::new_v4().simple());
    let env = env(&db, dir.path(), &prefix);
    let a = KeelProcess::serve(command(
        KEEL,
        dir.path(),
        &env,
        &["serve", "accounts", "console"],
    ))
    .await;
    let b = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "accounts"])).await;
    let http = reqwest::Client::new();
    let name = format!("n{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let r: Value = http
        .post(format!("{}/auth/register", a.url("accounts")))
        .form(&[
            ("username", name.as_str()),
            ("email", &format!("{name}@example.com")),
            ("password", "correct horse battery"),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = r["accessToken"].as_str().unwrap().to_owned();
    let id = r["user"]["_id"].as_str().unwrap().to_owned();
    let on_b = || format!("{}/account", b.url("accounts"));
    assert_eq!(status(on_b(), &token).await, 200);
    assert_eq!(status(on_b(), &token).await, 200, "cached on B");

    let ops = add_operator(KEEL, dir.path(), &env, "ops", &["users"]).await;
    let console = a.url("console").trim_end_matches('/').to_owned();
    let ConsoleSession { cookie, csrf } =
        session::console(&http, &console, "ops", &ops.password, &ops.secret).await;
    let act = |path: String, body: Value| {
        http.post(format!("{console}{path}"))
            .header("cookie", &cookie)
            .header("x-console-csrf", &csrf)
            .json(&body)
            .send()
    };
    let tomorrow = chrono::Utc::now() + chrono::Duration::days(1);
    let banned = act(
        format!("/console/v1/users/{id}/ban"),
        json!({ "reason": "spam", "until": tomorrow }),
    )
    .await
    .unwrap();
    assert_eq!(banned.status(), 200);
    assert_eq!(
        status(on_b(), &token).await,
        403,
        "B still served a banned user"
    );
    let lifted = act(
        format!("/console/v1/users/{id}/unban"),
        json!({ "reason": "appeal" }),
    )
    .await
    .unwrap();
    assert_eq!(lifted.status(), 200);
    assert_eq!(
        status(on_b(), &token).await,
        200,
        "B still refused a lifted ban"
    );
}
