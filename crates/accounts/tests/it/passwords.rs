//! A new password is refused when it is too easy to guess (a commonly used
//! one, a simple pattern, or the user's own name), naming why; passwords
//! set before the rule keep working.

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
