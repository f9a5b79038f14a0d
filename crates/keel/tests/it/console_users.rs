//! The console's users area over HTTP: find a user by a prefix, ban them
//! until tomorrow (their next request is refused), lift it, end their
//! sessions, remove a lost second factor; each in the audit log with its
//! reason; refused without the users role.

use keel_platform::console::Role;
use keel_platform::totp;
use keel_testkit::TestApp;
use serde_json::{Value, json};

use crate::console_kit::{operator, sign_in};

const PASSWORD: &str = "correct horse battery";

async fn app() -> TestApp {
    TestApp::builder()
        .service("accounts")
        .service("console")
        .spawn()
        .await
}

/// A user of accounts: id and access token.
struct User {
    id: String,
    token: String,
}

async fn register(app: &TestApp, name: &str) -> User {
    let r: Value = app
        .http
        .post(app.url("accounts", "/auth/register"))
        .form(&[
            ("username", name),
            ("email", &format!("{name}@example.com")),
            ("password", PASSWORD),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    User {
        id: r["user"]["_id"].as_str().expect("a user id").to_owned(),
        token: r["accessToken"].as_str().expect("a token").to_owned(),
    }
}

/// GET /account with the token: (status, code).
async fn account(app: &TestApp, token: &str) -> (u16, Value) {
    let r = app
        .http
        .get(app.url("accounts", "/account"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    (status, body["code"].clone())
}

async fn login(app: &TestApp, name: &str, code: Option<&str>) -> (u16, Value) {
    let mut form = vec![("login", name), ("password", PASSWORD)];
    if let Some(c) = code {
        form.push(("code", c));
    }
    let r = app
        .http
        .post(app.url("accounts", "/auth/login"))
        .form(&form)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_operator_finds_users_by_a_prefix_of_their_email_username_or_id() {
    let app = app().await;
    let ada = register(&app, "ada").await;
    register(&app, "adam").await;
    register(&app, "bob").await;
    let op = operator(&app, "ops", &[Role::Users]).await;
    let console = sign_in(&app, &op).await;
    let (status, found) = console.get("/console/v1/users?q=ADA").await;
    assert_eq!(status, 200, "{found}");
    let names: Vec<&str> = found["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ada", "adam"]);
    let (_, found) = console.get("/console/v1/users?q=bob%40exa").await;
    assert_eq!(found["users"][0]["username"], "bob");
    let (_, found) = console
        .get(&format!("/console/v1/users?q={}", &ada.id[..20]))
        .await;
    assert_eq!(found["users"][0]["id"], ada.id.as_str());
    let (status, body) = console.get("/console/v1/users?q=").await;
    assert_eq!(
        (status, body["code"].clone()),
        (400, json!("invalid_input"))
    );
    let (status, body) = console.get("/console/v1/users").await;
    assert_eq!(status, 400, "q is required: {body}");
    assert!(body["message"].as_str().unwrap().contains('q'), "{body}");
}

#[tokio::test]
async fn a_ban_until_tomorrow_refuses_the_users_requests_and_lifting_it_lets_them_in() {
    let app = app().await;
    let ada = register(&app, "ada").await;
    let op = operator(&app, "ops", &[Role::Users]).await;
    let console = sign_in(&app, &op).await;
    let tomorrow = chrono::Utc::now() + chrono::Duration::days(1);
    let path = format!("/console/v1/users/{}/ban", ada.id);
    let (status, body) = console.post(&path, json!({ "until": tomorrow })).await;
    assert_eq!(status, 400, "a reason is required: {body}");
    let yesterday = chrono::Utc::now() - chrono::Duration::days(1);
    let (status, body) = console
        .post(&path, json!({ "reason": "spam", "until": yesterday }))
        .await;
    assert_eq!(
        (status, body["code"].clone()),
        (400, json!("invalid_input")),
        "{body}"
    );

    let (status, row) = console
        .post(
            &path,
            json!({ "reason": "spam in the channel", "until": tomorrow }),
        )
        .await;
    assert_eq!(status, 200, "{row}");
    assert_eq!(row["banned"], true);
    assert_eq!(
        account(&app, &ada.token).await,
        (403, json!("ACCOUNT_BANNED"))
    );
    assert_eq!(login(&app, "ada", None).await.0, 403);

    let (status, row) = console
        .post(
            &format!("/console/v1/users/{}/unban", ada.id),
            json!({ "reason": "appealed" }),
        )
        .await;
    assert_eq!((status, row["banned"].clone()), (200, json!(false)));
    assert_eq!(account(&app, &ada.token).await.0, 200);

    let banned = &console.audit("accounts_user_banned").await[0];
    assert_eq!(banned["actor"], "operator:ops");
    assert_eq!(banned["subject"], ada.id.as_str());
    assert_eq!(banned["detail"]["reason"], "spam in the channel");
    assert_eq!(banned["before"]["banned"], false);
    assert_eq!(console.audit("accounts_user_unbanned").await.len(), 1);
}

#[tokio::test]
async fn a_ban_that_has_ended_lets_the_user_in_again() {
    let app = app().await;
    let ada = register(&app, "ada").await;
    let op = operator(&app, "ops", &[Role::Users]).await;
    let console = sign_in(&app, &op).await;
    let soon = chrono::Utc::now() + chrono::Duration::seconds(2);
    let (status, _) = console
        .post(
            &format!("/console/v1/users/{}/ban", ada.id),
            json!({ "reason": "cool off", "until": soon }),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(account(&app, &ada.token).await.0, 403);
    let back = keel_testkit::eventually_async(std::time::Duration::from_secs(20), || async {
        (account(&app, &ada.token).await.0 == 200).then_some(())
    })
    .await;
    assert!(back.is_some(), "the ban ended by itself");
}

#[tokio::test]
async fn ending_a_users_sessions_stops_their_tokens_and_the_page_shows_none() {
    let app = app().await;
    let ada = register(&app, "ada").await;
    let op = operator(&app, "ops", &[Role::Users]).await;
    let console = sign_in(&app, &op).await;
    let r = app
        .http
        .post(app.url("accounts", "/auth/login"))
        .form(&[("login", "ada"), ("password", "not her password")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let (status, page) = console.get(&format!("/console/v1/users/{}", ada.id)).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(page["refused_sign_ins"][0]["failed"], "password", "{page}");
    assert!(page.get("password_hash").is_none() && page.get("totp_secret").is_none());
    let (status, ended) = console
        .post(
            &format!("/console/v1/users/{}/sessions/end", ada.id),
            json!({ "reason": "stolen phone" }),
        )
        .await;
    assert_eq!((status, ended["sessions"].clone()), (200, json!(1)));
    assert_eq!(account(&app, &ada.token).await.0, 401);
    let (_, page) = console.get(&format!("/console/v1/users/{}", ada.id)).await;
    assert!(page["sessions"].as_array().unwrap().is_empty());
    assert_eq!(
        console.audit("accounts_sessions_ended").await[0]["detail"]["sessions"],
        1
    );
}

#[tokio::test]
async fn removing_a_lost_second_factor_lets_the_user_sign_in_with_the_password_alone() {
    let app = app().await;
    let ada = register(&app, "ada").await;
    // Two-factor on, as the user turns it on.
    let r: Value = app
        .http
        .post(app.url("accounts", "/account/two-factor"))
        .bearer_auth(&ada.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let secret = totp::from_base32(r["twoFactorSecret"].as_str().unwrap()).unwrap();
    let now = u64::try_from(chrono::Utc::now().timestamp()).unwrap();
    let code = totp::code_at(&secret, now).unwrap();
    let on = app
        .http
        .put(app.url("accounts", "/account/two-factor"))
        .bearer_auth(&ada.token)
        .form(&[("code", code.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(on.status(), 200);
    assert_eq!(
        login(&app, "ada", None).await.1["code"],
        "TWO_FACTOR_REQUIRED"
    );

    let op = operator(&app, "ops", &[Role::Users]).await;
    let console = sign_in(&app, &op).await;
    let path = format!("/console/v1/users/{}/two-factor/remove", ada.id);
    let (status, row) = console
        .post(
            &path,
            json!({ "reason": "lost phone; checked ID on a call" }),
        )
        .await;
    assert_eq!(
        (status, row["two_factor"].clone()),
        (200, json!(false)),
        "{row}"
    );
    let (status, body) = login(&app, "ada", None).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = console.post(&path, json!({ "reason": "again" })).await;
    assert_eq!((status, body["code"].clone()), (409, json!("conflict")));
    assert_eq!(console.audit("accounts_two_factor_removed").await.len(), 1);
}

#[tokio::test]
async fn an_operator_without_the_users_role_is_refused_there_and_an_unknown_user_is_404() {
    let app = app().await;
    let ada = register(&app, "ada").await;
    let jo = operator(&app, "jo", &[Role::Jobs]).await;
    let console = sign_in(&app, &jo).await;
    let (status, body) = console.get("/console/v1/users?q=ada").await;
    assert_eq!((status, body["code"].clone()), (403, json!("forbidden")));
    let (status, _) = console
        .post(
            &format!("/console/v1/users/{}/ban", ada.id),
            json!({ "reason": "x" }),
        )
        .await;
    assert_eq!(status, 403);
    assert_eq!(account(&app, &ada.token).await.0, 200, "not banned");

    let ops = operator(&app, "ops", &[Role::Users]).await;
    let console = sign_in(&app, &ops).await;
    for id in ["0123456789abcdef01234567", "not-an-id"] {
        let (status, body) = console.get(&format!("/console/v1/users/{id}")).await;
        assert_eq!(
            (status, body["code"].clone()),
            (404, json!("not_found")),
            "{id}"
        );
    }
}

#[tokio::test]
async fn an_operator_exports_a_users_data_and_deletes_the_account_as_the_user_would() {
    let app = app().await;
    let ada = register(&app, "ada").await;
    let op = operator(&app, "ops", &[Role::Users]).await;
    let console = sign_in(&app, &op).await;
    let (status, export) = console
        .get(&format!("/console/v1/users/{}/export", ada.id))
        .await;
    assert_eq!(status, 200, "{export}");
    assert_eq!(export["user"]["username"], "ada");
    assert_eq!(export["sessions"].as_array().unwrap().len(), 1);
    assert!(
        !export.to_string().contains("passwordHash") && !export.to_string().contains("$argon2")
    );
    assert_eq!(
        console.audit("accounts_user_exported").await[0]["subject"],
        ada.id.as_str()
    );

    let path = format!(
        "/console/v1/users/{}/passkeys/0123456789abcdef01234567/remove",
        ada.id
    );
    let (status, body) = console.post(&path, json!({ "reason": "lost" })).await;
    assert_eq!((status, body["code"].clone()), (404, json!("not_found")));

    let delete = format!("/console/v1/users/{}/delete", ada.id);
    let (status, _) = console.post(&delete, json!({ "reason": " " })).await;
    assert_eq!(status, 400, "a reason is required");
    let (status, _) = console
        .post(
            &delete,
            json!({ "reason": "asked by mail, identity checked" }),
        )
        .await;
    assert_eq!(status, 204);
    assert_eq!(account(&app, &ada.token).await.0, 401);
    let (status, _) = console.get(&format!("/console/v1/users/{}", ada.id)).await;
    assert_eq!(status, 404);
    let (_, found) = console.get("/console/v1/users?q=ada").await;
    assert!(found["users"].as_array().unwrap().is_empty());
    let deleted = &console.audit("accounts_user_deleted").await[0];
    assert_eq!(
        deleted["detail"]["reason"],
        "asked by mail, identity checked"
    );
    assert!(
        !deleted.to_string().contains("ada@example.com"),
        "the entry names no erased address"
    );
}

#[tokio::test]
async fn an_operator_resends_the_verification_mail_until_the_address_is_verified() {
    let app = app().await;
    let ada = register(&app, "ada").await;
    let op = operator(&app, "ops", &[Role::Users]).await;
    let console = sign_in(&app, &op).await;
    let path = format!("/console/v1/users/{}/verification-mail", ada.id);
    let (status, _) = console
        .post(&path, json!({ "reason": "says it never came" }))
        .await;
    assert_eq!(status, 204);
    let mails = keel_testkit::eventually_async(std::time::Duration::from_secs(20), || async {
        let m = keel_testkit::mail_files(&app.data_dir().join("mail"));
        (m.iter().filter(|m| m.subject.contains("Verify")).count() >= 2).then_some(())
    })
    .await;
    assert!(mails.is_some(), "a second verification mail went out");
    assert_eq!(console.audit("accounts_verification_resent").await.len(), 1);
    use keel_platform::sea_orm::ConnectionTrait;
    app.platform()
        .db
        .write()
        .execute_unprepared("UPDATE accounts_users SET email_verified = true")
        .await
        .unwrap();
    let (status, body) = console.post(&path, json!({ "reason": "again" })).await;
    assert_eq!((status, body["code"].clone()), (409, json!("conflict")));
}
