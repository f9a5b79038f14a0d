//! Passwords against guessing: a new password is refused when it is too
//! easy to guess (a commonly used one, a simple pattern, or the user's own
//! name), naming why, while passwords set before the rule keep working;
//! sign-ins and registrations are limited per address and login a minute.

use keel_platform::sea_orm::ConnectionTrait;

use crate::helpers::Api;

#[tokio::test]
async fn registering_with_a_common_password_is_refused_naming_why() {
    let api = Api::start().await;
    for (password, why) in [
        ("password123", "very common password"),
        ("qwertyuiop", "top-100 common password"),
        ("aaaaaaaaaaaa", "repeats"),
        ("adalovelace1", "easy to guess"),
    ] {
        let r = api
            .post(
                "/auth/register",
                None,
                &[
                    ("username", "adalovelace"),
                    ("email", "ada@example.com"),
                    ("password", password),
                ],
            )
            .await;
        assert_eq!(
            (r.status, r.code()),
            (400, "VALIDATION_ERROR"),
            "{password}: {}",
            r.text
        );
        let message = r.body["message"].as_str().unwrap().to_lowercase();
        assert!(
            message.starts_with("password is too easy to guess"),
            "{message}"
        );
        assert!(message.contains(why), "{password}: {message}");
    }
}

#[tokio::test]
async fn changing_to_a_common_password_is_refused_and_an_old_weak_one_still_works() {
    let api = Api::start().await;
    let user = api.register("grace").await;
    let r = api
        .put(
            "/account/change-password",
            &user.token,
            &[
                ("oldPassword", &user.password),
                ("newPassword", "letmein2024"),
            ],
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (400, "VALIDATION_ERROR"),
        "{}",
        r.text
    );
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("newPassword is too easy to guess")
    );
    // A password set before the rule (written as an older release stored it).
    let hash = keel_platform::password::hash("password".to_owned())
        .await
        .unwrap();
    api.app
        .platform()
        .db
        .write()
        .execute_unprepared(&format!(
            "UPDATE accounts_users SET password_hash = '{hash}' WHERE id = '{}'",
            user.id
        ))
        .await
        .unwrap();
    assert_eq!(api.login("grace", "password", None).await.status, 200);
}

#[tokio::test]
async fn sign_ins_and_registrations_from_one_address_are_limited_per_minute() {
    let api = Api::with(&[
        ("KEEL_ACCOUNTS_LOGINS_PER_MINUTE", "3"),
        ("KEEL_ACCOUNTS_REGISTRATIONS_PER_MINUTE", "2"),
    ])
    .await;
    api.register("first").await;
    api.register("second").await;
    let r = api
        .post(
            "/auth/register",
            None,
            &[
                ("username", "third"),
                ("email", "third@example.com"),
                ("password", "correct horse battery"),
            ],
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (429, "TOO_MANY_REQUESTS"),
        "{}",
        r.text
    );
    assert!(r.headers.contains_key("retry-after"));
    for _ in 0..3 {
        assert_eq!(api.login("first", "wrong password", None).await.status, 401);
    }
    let r = api.login("first", "correct horse battery", None).await;
    assert_eq!(
        (r.status, r.code()),
        (429, "TOO_MANY_REQUESTS"),
        "even the right password waits"
    );
}

#[tokio::test]
async fn one_login_name_takes_at_most_ten_attempts_a_minute() {
    let api = Api::start().await;
    api.register("target").await;
    for _ in 0..10 {
        assert_eq!(
            api.login("TARGET", "guess guess guess", None).await.status,
            401
        );
    }
    let r = api.login("target", "correct horse battery", None).await;
    assert_eq!(
        (r.status, r.code()),
        (429, "TOO_MANY_REQUESTS"),
        "{}",
        r.text
    );
}
