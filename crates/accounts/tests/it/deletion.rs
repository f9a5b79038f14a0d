//! Deleting an account: the proof it asks for, the lockout it counts
//! towards, and a database with nothing of the user left.

use reqwest::Method;

use crate::helpers::{Api, Resp, User};
use crate::two_factor::{backup_codes, code, enable, now};

async fn delete(api: &Api, user: &User, form: &[(&str, &str)]) -> Resp {
    api.send(Method::DELETE, "/account", Some(&user.token), Some(form))
        .await
}

/// Waits until no job is queued or running (mails delivered).
async fn drained(api: &Api) {
    let db = api.app.platform().db.clone();
    let idle = keel_testkit::eventually_async(std::time::Duration::from_secs(10), || {
        let db = db.clone();
        async move {
            let busy = keel_platform::jobs::busy(&db).await.unwrap_or(1);
            let queued = keel_platform::jobs::queued(&db).await.unwrap_or(1);
            (busy + queued == 0).then_some(())
        }
    })
    .await;
    assert!(idle.is_some(), "jobs never drained");
}

#[tokio::test]
async fn a_deleted_account_leaves_nothing_of_the_user_in_any_table() {
    let api = Api::start().await;
    let ada = api.register("ada_gone").await;
    let bob = api.register("bob_stays").await;
    // Everything a user can own: goals and a link, a second session, a
    // pending address change, two-factor with backup codes, a lockout record.
    let y = api
        .post(
            "/goals/yearly",
            Some(&ada.token),
            &[("title", "year"), ("completeBy", "12/31/2027")],
        )
        .await;
    let yid = y.body["goal"]["_id"].as_str().unwrap().to_owned();
    api.post(
        "/goals/weekly",
        Some(&ada.token),
        &[("title", "week"), ("yearlyGoal", &yid)],
    )
    .await;
    api.post("/goals/weekly", Some(&bob.token), &[("title", "bob's")])
        .await;
    let secret = enable(&api, &ada).await;
    backup_codes(&api, &ada).await;
    let second = api
        .login("ada_gone", &ada.password, Some(&code(&secret, now() + 30)))
        .await;
    assert_eq!(second.status, 200, "{}", second.text);
    let r = api
        .post(
            "/account/change-email",
            Some(&ada.token),
            &[("email", "ada.new@example.com")],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let wrong = delete(&api, &ada, &[("password", "not it"), ("code", "000000")]).await;
    assert_eq!((wrong.status, wrong.code()), (400, "INVALID_PASSWORD"));

    let backup = backup_codes(&api, &ada).await;
    let r = delete(
        &api,
        &ada,
        &[("password", &ada.password), ("code", &backup[0])],
    )
    .await;
    assert_eq!((r.status, r.code()), (200, "ACCOUNT_DELETED"), "{}", r.text);

    let goodbye = keel_testkit::eventually(std::time::Duration::from_secs(10), || {
        api.app
            .mails()
            .into_iter()
            .find(|m| m.to == "ada_gone@example.com" && m.subject.contains("was deleted"))
    })
    .await;
    assert!(goodbye.is_some(), "no goodbye mail: {:?}", api.app.mails());
    drained(&api).await;
    let rows = keel_testkit::scan::every_row(&api.app.platform().db).await;
    assert!(
        rows.iter().any(|(_, r)| r.contains(&bob.id)),
        "the scan reads the users"
    );
    for needle in [ada.id.as_str(), "ada_gone", "ada.new@example.com"] {
        let found: Vec<_> = rows
            .iter()
            .filter(|(_, r)| r.to_lowercase().contains(&needle.to_lowercase()))
            .collect();
        assert!(found.is_empty(), "{needle} is still in {found:?}");
    }
    for token in [&ada.token, second.body["accessToken"].as_str().unwrap()] {
        let r = api.get("/account", token).await;
        assert_eq!(r.status, 401, "{}", r.text);
    }
    let r = api
        .post("/auth/refresh", None, &[("refreshToken", &ada.refresh)])
        .await;
    assert_eq!(r.status, 401, "{}", r.text);
    let r = api.login("ada_gone", &ada.password, None).await;
    assert_eq!((r.status, r.code()), (401, "INVALID_CREDENTIALS"));
    assert_eq!(api.me(&bob.token).await["username"], "bob_stays");
}

#[tokio::test]
async fn deletion_asks_for_the_password_and_the_second_factor_and_counts_wrong_ones() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let r = delete(&api, &ada, &[]).await;
    assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"));
    assert!(r.text.contains("password"), "{}", r.text);
    let secret = enable(&api, &ada).await;
    let r = delete(&api, &ada, &[("password", &ada.password)]).await;
    assert_eq!(
        (r.status, r.code()),
        (400, "TWO_FACTOR_REQUIRED"),
        "{}",
        r.text
    );
    let r = delete(&api, &ada, &[("password", &ada.password), ("code", "")]).await;
    assert_eq!(r.code(), "TWO_FACTOR_REQUIRED");
    // Five wrong guesses, of either kind, lock the account's sensitive steps.
    for i in 0..5 {
        let form: &[(&str, &str)] = if i % 2 == 0 {
            &[("password", "wrong password"), ("code", "000000")]
        } else {
            &[("password", &ada.password), ("code", "000000")]
        };
        let r = delete(&api, &ada, form).await;
        let expected = if i % 2 == 0 {
            "INVALID_PASSWORD"
        } else {
            "INVALID_CODE"
        };
        assert_eq!((r.status, r.code()), (400, expected), "{i}: {}", r.text);
    }
    let right = code(&secret, now());
    let r = delete(&api, &ada, &[("password", &ada.password), ("code", &right)]).await;
    assert_eq!(
        (r.status, r.code()),
        (429, "TOO_MANY_ATTEMPTS"),
        "{}",
        r.text
    );
    assert!(r.headers.contains_key("retry-after"));
    let r = api
        .send(
            Method::DELETE,
            &format!("/account/two-factor?code={right}"),
            Some(&ada.token),
            None,
        )
        .await;
    assert_eq!(r.status, 429, "the same lockout as two-factor's own steps");
    assert_eq!(api.me(&ada.token).await["username"], "ada", "still there");
}

#[tokio::test]
async fn without_two_factor_the_password_alone_deletes_and_json_works_too() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let r = api
        .send_json(
            Method::DELETE,
            "/account",
            Some(&ada.token),
            &serde_json::json!({"password": ada.password}),
        )
        .await;
    assert_eq!((r.status, r.code()), (200, "ACCOUNT_DELETED"), "{}", r.text);
    let r = api.register("ada").await;
    assert_ne!(r.id, ada.id, "the name is free again");
}
