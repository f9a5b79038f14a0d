//! Admins are not forever: an admin holding svc_manage_admins disables,
//! enables, resets, ends the sessions of and removes the others; each
//! change shows in the audit log under who made it.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Resp, Svc, finish};

/// `manager`, holding svc_manage_admins, and its application password.
async fn manager(svc: &Svc) -> String {
    let (_, pw) = svc.admin("manager").await;
    keel_svc::domain::admins::set_capability(
        &svc.app.platform().db,
        "manager",
        keel_svc::domain::admins::MANAGE_ADMINS,
        true,
    )
    .await
    .unwrap();
    pw
}

async fn login(svc: &Svc, username: &str, password: &str) -> Resp {
    finish(
        svc.app
            .http
            .post(svc.url("/admin/login"))
            .json(&json!({"username": username, "password": password}))
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// The cookie session's cookie and nonce after a login.
fn session_of(r: &Resp) -> (String, String) {
    let cookie = r.headers["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    (cookie, r.body["nonce"].as_str().unwrap().to_owned())
}

async fn with_session(svc: &Svc, (cookie, nonce): &(String, String)) -> u16 {
    svc.app
        .http
        .get(svc.url("/admin/settings"))
        .header("cookie", cookie)
        .header("x-svc-nonce", nonce)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn audit(svc: &Svc, auth: (&str, &str), query: &str) -> Vec<Value> {
    let r = svc
        .admin_call(Method::GET, &format!("/admin/audit?{query}"), auth, None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["entries"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_disabled_admin_is_refused_at_every_door_until_enabled() {
    let svc = Svc::start().await;
    let m = manager(&svc).await;
    let (login_pw, app_pw) = svc.admin("clerk2").await;
    let session = session_of(&login(&svc, "clerk2", &login_pw).await);
    assert_eq!(with_session(&svc, &session).await, 200);

    let r = svc
        .admin_call(
            Method::POST,
            "/admin/users/clerk2/disable",
            ("manager", &m),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["ended"], json!({"sessions": 1, "app_passwords": 1}));
    assert_eq!(with_session(&svc, &session).await, 401, "the session ended");
    let r = svc
        .admin_call(Method::GET, "/admin/settings", ("clerk2", &app_pw), None)
        .await;
    assert_eq!(r.status, 401, "the application password is revoked");
    let r = login(&svc, "clerk2", &login_pw).await;
    assert_eq!(
        (r.status, r.code()),
        (401, "rest_invalid_credentials"),
        "refused as a wrong password is"
    );
    let users = svc
        .admin_call(Method::GET, "/admin/users", ("manager", &m), None)
        .await;
    let clerk = users
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "clerk2");
    assert_eq!(clerk.unwrap()["disabled"], true);

    let r = svc
        .admin_call(
            Method::POST,
            "/admin/users/clerk2/enable",
            ("manager", &m),
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(login(&svc, "clerk2", &login_pw).await.status, 200);

    let actions: Vec<Value> = audit(&svc, ("manager", &m), "actor=manager")
        .await
        .iter()
        .map(|e| json!([e["event"], e["subject"], e["before"], e["after"]]))
        .collect();
    assert_eq!(
        actions,
        [
            json!(["svc_admin_enabled", "clerk2", {"disabled": true}, {"disabled": false}]),
            json!(["svc_admin_disabled", "clerk2", {"disabled": false}, {"disabled": true}]),
        ]
    );
}

#[tokio::test]
async fn a_new_password_is_shown_once_and_ends_the_old_sessions() {
    let svc = Svc::start().await;
    let m = manager(&svc).await;
    let (old, _) = svc.admin("clerk2").await;
    let session = session_of(&login(&svc, "clerk2", &old).await);
    let r = svc
        .admin_call(
            Method::POST,
            "/admin/users/clerk2/password",
            ("manager", &m),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.headers["cache-control"], "no-store");
    assert_eq!(r.body["sessions_ended"], 1);
    let new = r.body["password"].as_str().unwrap().to_owned();
    assert_eq!(with_session(&svc, &session).await, 401);
    assert_eq!(login(&svc, "clerk2", &old).await.status, 401);
    assert_eq!(login(&svc, "clerk2", &new).await.status, 200);
    let entries = audit(&svc, ("manager", &m), "event=svc_admin_password_set").await;
    assert_eq!(entries.len(), 1);
    assert!(
        !serde_json::to_string(&entries).unwrap().contains(&new),
        "the password is not in the log"
    );
}

#[tokio::test]
async fn ending_an_admins_sessions_and_removing_them() {
    let svc = Svc::start().await;
    let m = manager(&svc).await;
    let (pw, app_pw) = svc.admin("clerk2").await;
    let session = session_of(&login(&svc, "clerk2", &pw).await);
    let r = svc
        .admin_call(
            Method::POST,
            "/admin/users/clerk2/end-sessions",
            ("manager", &m),
            None,
        )
        .await;
    assert_eq!(
        r.body,
        json!({"sessions": 1, "app_passwords": 1}),
        "{}",
        r.text
    );
    assert_eq!(with_session(&svc, &session).await, 401);
    let r = svc
        .admin_call(Method::GET, "/admin/settings", ("clerk2", &app_pw), None)
        .await;
    assert_eq!(r.status, 401);
    let r = svc
        .admin_call(Method::DELETE, "/admin/users/clerk2", ("manager", &m), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(login(&svc, "clerk2", &pw).await.status, 401);
    let r = svc
        .admin_call(Method::DELETE, "/admin/users/clerk2", ("manager", &m), None)
        .await;
    assert_eq!((r.status, r.code()), (404, "invalid_username"));
}

#[tokio::test]
async fn only_an_admin_who_may_manage_admins_and_never_themselves() {
    let svc = Svc::start().await;
    let m = manager(&svc).await;
    let (_, boss) = svc.admin("boss").await;
    for (method, path) in [
        (Method::GET, "/admin/users"),
        (Method::POST, "/admin/users/manager/disable"),
        (Method::DELETE, "/admin/users/manager"),
    ] {
        let r = svc.admin_call(method, path, ("boss", &boss), None).await;
        assert_eq!((r.status, r.code()), (403, "rest_forbidden"), "{path}");
    }
    for (method, path) in [
        (Method::POST, "/admin/users/manager/disable"),
        (Method::DELETE, "/admin/users/manager"),
    ] {
        let r = svc.admin_call(method, path, ("manager", &m), None).await;
        assert_eq!((r.status, r.code()), (403, "rest_forbidden"), "{path}");
        assert!(r.body["message"].as_str().unwrap().contains("yourself"));
    }
    let r = svc
        .admin_call(
            Method::POST,
            "/admin/users/nobody/disable",
            ("manager", &m),
            None,
        )
        .await;
    assert_eq!((r.status, r.code()), (404, "invalid_username"));
}

#[tokio::test]
async fn every_admin_action_is_in_the_audit_log_filterable_by_admin() {
    let svc = Svc::start().await;
    let (login_pw, pw) = svc.admin("boss").await;
    let auth = ("boss", pw.as_str());
    // Sign-ins: one refused, one made.
    assert_eq!(login(&svc, "boss", "wrong one").await.status, 401);
    let session = session_of(&login(&svc, "boss", &login_pw).await);
    // An application password made and revoked (a cookie session's).
    let made: Value = svc
        .app
        .http
        .post(svc.url("/admin/app-passwords"))
        .header("cookie", &session.0)
        .header("x-svc-nonce", &session.1)
        .json(&json!({"name": "ci"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let uuid = made["uuid"]
        .as_str()
        .unwrap_or_else(|| panic!("{made}"))
        .to_owned();
    let r = svc
        .admin_call(
            Method::DELETE,
            &format!("/admin/app-passwords/{uuid}"),
            auth,
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    // Settings changed: old and new value.
    let r = svc
        .admin_call(
            Method::PATCH,
            "/admin/settings",
            auth,
            Some(json!({"submission_rate_limit": 7})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    // A form made, changed, removed.
    let form =
        json!({"id": "9", "title": "Poll", "fields": [{"id": "q", "label": "Q", "type": "text"}]});
    assert_eq!(
        svc.admin_call(Method::POST, "/admin/forms", auth, Some(form.clone()))
            .await
            .status,
        201
    );
    let mut changed = form.clone();
    changed["title"] = json!("Poll 2");
    assert_eq!(
        svc.admin_call(Method::PUT, "/admin/forms/9", auth, Some(changed))
            .await
            .status,
        200
    );
    assert_eq!(
        svc.admin_call(Method::DELETE, "/admin/forms/9", auth, None)
            .await
            .status,
        200
    );
    // A send made in an hour (to a device registered first), and cancelled.
    svc.registered(0).await;
    let at = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    let r = svc
        .admin_call(
            Method::POST,
            "/send",
            auth,
            Some(json!({"title": "Hi", "body": "there", "send_at": at})),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let send = r.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        svc.admin_call(Method::DELETE, &format!("/send/{send}"), auth, None)
            .await
            .status,
        200
    );

    let entries = audit(&svc, auth, "actor=boss&per_page=100").await;
    let events: Vec<&str> = entries
        .iter()
        .rev()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        [
            "svc_admin_sign_in_refused",
            "svc_admin_signed_in",
            "svc_app_password_created",
            "svc_app_password_revoked",
            "svc_settings_changed",
            "svc_form_created",
            "svc_form_changed",
            "svc_form_removed",
            "svc_send_created",
            "svc_send_cancelled",
        ]
    );
    let setting = entries
        .iter()
        .find(|e| e["event"] == "svc_settings_changed")
        .unwrap();
    assert_eq!(setting["subject"], "submission_rate_limit");
    assert_eq!(setting["before"], json!({"submission_rate_limit": 10}));
    assert_eq!(setting["after"], json!({"submission_rate_limit": 7}));
    let changed = entries
        .iter()
        .find(|e| e["event"] == "svc_form_changed")
        .unwrap();
    assert_eq!(
        (
            changed["before"]["title"].clone(),
            changed["after"]["title"].clone()
        ),
        (json!("Poll"), json!("Poll 2"))
    );
    assert!(
        entries
            .iter()
            .all(|e| e["address"] == "127.0.0.1" && e["actor"] == "boss")
    );
    let log = serde_json::to_string(&entries).unwrap();
    assert!(
        !log.contains(&login_pw) && !log.contains(&pw.replace(' ', "")),
        "no password"
    );
    assert!(audit(&svc, auth, "actor=someone-else").await.is_empty());
}
