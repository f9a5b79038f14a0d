//! Application passwords over REST: GET and POST /admin/app-passwords,
//! DELETE /admin/app-passwords/{uuid}.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Resp, Svc, finish};

/// A signed-in cookie session: (cookie, nonce).
async fn session(svc: &Svc, username: &str, password: &str) -> (String, String) {
    let r = finish(
        svc.app
            .http
            .post(svc.url("/admin/login"))
            .json(&json!({"username": username, "password": password}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let cookie = r.headers["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    (cookie, r.body["nonce"].as_str().unwrap().to_owned())
}

async fn with_session(
    svc: &Svc,
    (cookie, nonce): &(String, String),
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Resp {
    let mut req = svc
        .app
        .http
        .request(method, svc.url(path))
        .header("cookie", cookie)
        .header("X-Svc-Nonce", nonce);
    if let Some(b) = body {
        req = req.json(&b);
    }
    finish(req.send().await.unwrap()).await
}

#[tokio::test]
async fn an_application_password_is_made_in_a_session_shown_once_listed_and_revoked() {
    let svc = Svc::start().await;
    let (login, tests_pw) = svc.admin("boss").await;
    let s = session(&svc, "boss", &login).await;

    let made = with_session(
        &svc,
        &s,
        Method::POST,
        "/admin/app-passwords",
        Some(json!({"name": "  deploy script "})),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.text);
    assert_eq!(made.body["name"], "deploy script", "the name is trimmed");
    let password = made.body["password"].as_str().unwrap().to_owned();
    assert_eq!(password.len(), 29, "24 characters in groups of four");
    let uuid = made.body["uuid"].as_str().unwrap().to_owned();

    let list = with_session(&svc, &s, Method::GET, "/admin/app-passwords", None).await;
    assert_eq!(list.status, 200, "{}", list.text);
    let names: Vec<&str> = list
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tests", "deploy script"], "oldest first");
    assert_eq!(list.body[1]["uuid"], uuid.as_str());
    assert!(
        list.body[1].get("password").is_none(),
        "never listed: {}",
        list.text
    );
    assert!(!list.text.contains(&password));

    let used = svc
        .admin_call(
            Method::GET,
            "/admin/app-passwords",
            ("boss", &password),
            None,
        )
        .await;
    assert_eq!(used.status, 200, "the new password signs in: {}", used.text);

    let again = with_session(
        &svc,
        &s,
        Method::POST,
        "/admin/app-passwords",
        Some(json!({"name": "deploy script"})),
    )
    .await;
    assert_eq!(
        (again.status, again.code()),
        (409, "application_password_duplicate_name")
    );
    let by_basic = svc
        .admin_call(
            Method::POST,
            "/admin/app-passwords",
            ("boss", &password),
            Some(json!({"name": "another"})),
        )
        .await;
    assert_eq!(
        (by_basic.status, by_basic.code()),
        (403, "rest_cannot_create_application_passwords"),
        "an application password cannot make more of itself"
    );

    let gone = with_session(
        &svc,
        &s,
        Method::DELETE,
        &format!("/admin/app-passwords/{uuid}"),
        None,
    )
    .await;
    assert_eq!(gone.status, 200, "{}", gone.text);
    assert_eq!(gone.body, json!({"deleted": true, "uuid": uuid}));
    let refused = svc
        .admin_call(Method::GET, "/admin/settings", ("boss", &password), None)
        .await;
    assert_eq!(
        (refused.status, refused.code()),
        (401, "incorrect_password"),
        "revoked: refused from then on"
    );
    let twice = svc
        .admin_call(
            Method::DELETE,
            &format!("/admin/app-passwords/{uuid}"),
            ("boss", &tests_pw),
            None,
        )
        .await;
    assert_eq!(
        (twice.status, twice.code()),
        (404, "rest_application_password_not_found")
    );
    let list = with_session(&svc, &s, Method::GET, "/admin/app-passwords", None).await;
    assert_eq!(list.body.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn an_administrator_sees_and_revokes_only_their_own_application_passwords() {
    let svc = Svc::start().await;
    let (_, boss_pw) = svc.admin("boss").await;
    let (_, other_pw) = svc.admin("other").await;
    let mine = svc
        .admin_call(
            Method::GET,
            "/admin/app-passwords",
            ("boss", &boss_pw),
            None,
        )
        .await;
    let uuid = mine.body[0]["uuid"].as_str().unwrap().to_owned();
    let theirs = svc
        .admin_call(
            Method::GET,
            "/admin/app-passwords",
            ("other", &other_pw),
            None,
        )
        .await;
    assert_eq!(theirs.body.as_array().unwrap().len(), 1);
    assert_ne!(theirs.body[0]["uuid"], uuid.as_str());
    let r = svc
        .admin_call(
            Method::DELETE,
            &format!("/admin/app-passwords/{uuid}"),
            ("other", &other_pw),
            None,
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (404, "rest_application_password_not_found")
    );
    let still = svc
        .admin_call(Method::GET, "/admin/settings", ("boss", &boss_pw), None)
        .await;
    assert_eq!(still.status, 200);

    let clerk = svc.clerk().await;
    for method in [Method::GET, Method::POST] {
        let r = svc
            .admin_call(
                method.clone(),
                "/admin/app-passwords",
                ("clerk", &clerk),
                Some(json!({"name": "n"})),
            )
            .await;
        assert_eq!((r.status, r.code()), (403, "rest_forbidden"), "{method}");
    }
    let r = finish(
        svc.app
            .http
            .get(svc.url("/admin/app-passwords"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((r.status, r.code()), (401, "rest_not_logged_in"));
}

#[tokio::test]
async fn a_bad_application_password_name_is_400_naming_it_and_nothing_is_made() {
    let svc = Svc::start().await;
    let (login, _) = svc.admin("boss").await;
    let s = session(&svc, "boss", &login).await;
    let long = "x".repeat(101);
    for (body, code) in [
        (json!({}), "rest_missing_callback_param"),
        (json!({"name": "   "}), "rest_missing_callback_param"),
        (json!({"name": null}), "rest_missing_callback_param"),
        (json!({"name": 5}), "rest_invalid_param"),
        (json!({"name": long}), "rest_invalid_param"),
        (json!({"name": "ok", "extra": 1}), "rest_invalid_param"),
    ] {
        let r = with_session(
            &svc,
            &s,
            Method::POST,
            "/admin/app-passwords",
            Some(body.clone()),
        )
        .await;
        assert_eq!((r.status, r.code()), (400, code), "{body}: {}", r.text);
        assert!(
            r.text.contains("name") || r.text.contains("extra"),
            "names the field: {}",
            r.text
        );
    }
    let list = with_session(&svc, &s, Method::GET, "/admin/app-passwords", None).await;
    assert_eq!(
        list.body.as_array().unwrap().len(),
        1,
        "only the one made at the start"
    );
}
