use reqwest::Method;

use crate::auth::token_in;
use crate::helpers::Api;

#[tokio::test]
async fn changing_the_email_end_to_end_with_the_token_from_the_mail() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    api.mails_to("ada@example.com", 1).await;
    let r = api
        .post(
            "/account/change-email",
            Some(&user.token),
            &[("email", "lovelace@example.org")],
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (200, "PENDING_CONFIRMATION"),
        "{}",
        r.text
    );
    assert!(r.body["message"].is_string());
    let mails = api.mails_to("lovelace@example.org", 1).await;
    let confirm = &mails[0];
    assert_eq!(confirm.to, "lovelace@example.org");
    let token = token_in(&confirm.body);
    assert_eq!(
        api.me(&user.token).await["email"],
        "ada@example.com",
        "nothing changes before confirmation"
    );

    let r = api
        .put(&format!("/account/change-email/{token}"), &user.token, &[])
        .await;
    assert_eq!((r.status, r.code()), (200, "EMAIL_CHANGED"), "{}", r.text);
    let me = api.me(&user.token).await;
    assert_eq!(me["email"], "lovelace@example.org");
    assert_eq!(me["emailVerified"], true);
    assert_eq!(me["__v"], 1);

    let mails = api.mails_to("ada@example.com", 2).await;
    assert_eq!(
        mails[1].subject, "Your email address was changed",
        "the old address is told"
    );
    assert!(mails[1].body.contains("lovelace@example.org"));
    let again = api
        .put(&format!("/account/change-email/{token}"), &user.token, &[])
        .await;
    assert_eq!(
        (again.status, again.code()),
        (400, "INVALID_TOKEN"),
        "single use"
    );
    assert_eq!(
        api.login("lovelace@example.org", &user.password, None)
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn resending_issues_a_new_token_and_the_old_one_stops_working() {
    let api = Api::with(&[("KEEL_ACCOUNTS_EMAIL_RESEND_INTERVAL_SECS", "0")]).await;
    let user = api.register("ada").await;
    api.post(
        "/account/change-email",
        Some(&user.token),
        &[("email", "new@example.org")],
    )
    .await;
    let first = token_in(&api.mails_to("new@example.org", 1).await[0].body);
    let r = api
        .post("/account/change-email/resend", Some(&user.token), &[])
        .await;
    assert_eq!(
        (r.status, r.code()),
        (200, "PENDING_CONFIRMATION"),
        "{}",
        r.text
    );
    let mails = api.mails_to("new@example.org", 2).await;
    let second = token_in(&mails[1].body);
    assert_ne!(first, second);
    let r = api
        .put(&format!("/account/change-email/{first}"), &user.token, &[])
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_TOKEN"));
    let r = api
        .put(&format!("/account/change-email/{second}"), &user.token, &[])
        .await;
    assert_eq!((r.status, r.code()), (200, "EMAIL_CHANGED"));
}

#[tokio::test]
async fn resending_too_soon_is_429_with_retry_after() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    api.post(
        "/account/change-email",
        Some(&user.token),
        &[("email", "new@example.org")],
    )
    .await;
    let r = api
        .post("/account/change-email/resend", Some(&user.token), &[])
        .await;
    assert_eq!((r.status, r.code()), (429, "TOO_MANY_REQUESTS"));
    let wait: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait));
}

#[tokio::test]
async fn resending_with_nothing_pending_is_409() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .post("/account/change-email/resend", Some(&user.token), &[])
        .await;
    assert_eq!((r.status, r.code()), (409, "EMAIL_CHANGE_NOT_PENDING"));
}

#[tokio::test]
async fn confirming_with_nothing_pending_or_an_unknown_token_is_400_invalid_token() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .put("/account/change-email/whatever", &user.token, &[])
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_TOKEN"));
    api.post(
        "/account/change-email",
        Some(&user.token),
        &[("email", "new@example.org")],
    )
    .await;
    let r = api
        .put("/account/change-email/whatever", &user.token, &[])
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_TOKEN"));
}

#[tokio::test]
async fn another_users_token_does_not_confirm_my_change() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let bob = api.register("bob").await;
    api.post(
        "/account/change-email",
        Some(&ada.token),
        &[("email", "new@example.org")],
    )
    .await;
    let token = token_in(&api.mails_to("new@example.org", 1).await[0].body);
    let r = api
        .put(&format!("/account/change-email/{token}"), &bob.token, &[])
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_TOKEN"));
}

#[tokio::test]
async fn an_expired_token_is_400_invalid_token() {
    use keel_accounts::entity::email_change::{Column, Entity};
    use keel_platform::sea_orm::EntityTrait;
    use keel_platform::sea_orm::sea_query::Expr;
    let api = Api::start().await;
    let user = api.register("ada").await;
    api.post(
        "/account/change-email",
        Some(&user.token),
        &[("email", "new@example.org")],
    )
    .await;
    let token = token_in(&api.mails_to("new@example.org", 1).await[0].body);
    Entity::update_many()
        .col_expr(
            Column::ExpiresAt,
            Expr::value(chrono::Utc::now() - chrono::Duration::minutes(1)),
        )
        .exec(api.app.platform().db.write())
        .await
        .unwrap();
    let r = api
        .put(&format!("/account/change-email/{token}"), &user.token, &[])
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_TOKEN"));
}

#[tokio::test]
async fn an_address_of_another_account_is_409_and_a_bad_one_400() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    api.register("bob").await;
    let r = api
        .post(
            "/account/change-email",
            Some(&user.token),
            &[("email", "BOB@example.com")],
        )
        .await;
    assert_eq!((r.status, r.code()), (409, "EMAIL_TAKEN"));
    for bad in ["nope", "a@b", ""] {
        let r = api
            .post(
                "/account/change-email",
                Some(&user.token),
                &[("email", bad)],
            )
            .await;
        assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"), "{bad:?}");
        assert!(r.body["message"].as_str().unwrap().starts_with("email"));
    }
    let r = api
        .post(
            "/account/change-email",
            Some(&user.token),
            &[("email", "ADA@example.com")],
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (400, "VALIDATION_ERROR"),
        "one's own address"
    );
}

#[tokio::test]
async fn an_address_taken_while_pending_is_409_at_confirmation() {
    let api = Api::with(&[("KEEL_ACCOUNTS_EMAIL_RESEND_INTERVAL_SECS", "0")]).await;
    let user = api.register("ada").await;
    api.post(
        "/account/change-email",
        Some(&user.token),
        &[("email", "new@example.org")],
    )
    .await;
    let token = token_in(&api.mails_to("new@example.org", 1).await[0].body);
    let r = api
        .post(
            "/auth/register",
            None,
            &[
                ("username", "bob"),
                ("email", "new@example.org"),
                ("password", "long enough, really"),
            ],
        )
        .await;
    assert_eq!(r.status, 200);
    let r = api
        .send(
            Method::PUT,
            &format!("/account/change-email/{token}"),
            Some(&user.token),
            None,
        )
        .await;
    assert_eq!((r.status, r.code()), (409, "EMAIL_TAKEN"));
}
