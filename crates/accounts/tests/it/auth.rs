use std::time::Duration;

use crate::helpers::{Api, is_iso_millis, is_object_id, user_from};

#[tokio::test]
async fn registering_returns_the_user_and_a_working_token_pair() {
    let api = Api::start().await;
    let r = api
        .post(
            "/auth/register",
            None,
            &[
                ("username", "Ada"),
                ("email", "Ada@Example.com"),
                ("password", "correct horse"),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let u = &r.body["user"];
    assert!(is_object_id(&u["_id"]));
    assert_eq!(u["username"], "Ada");
    assert_eq!(u["email"], "Ada@Example.com");
    assert_eq!(u["slug"], "ada");
    assert_eq!(u["role"], "user");
    assert_eq!(u["twoFactor"], false);
    assert_eq!(u["emailVerified"], false);
    assert_eq!(u["isBanned"], false);
    assert_eq!(u["streamerMode"], false);
    assert_eq!(u["notifications"]["email"]["weeklyGoals"], true);
    assert_eq!(u["__v"], 0);
    assert!(is_iso_millis(&u["createdAt"]) && is_iso_millis(&u["updatedAt"]));
    assert!(u.get("password").is_none() && u.get("passwordHash").is_none());
    let user = user_from(&r, "correct horse");
    assert_eq!(api.me(&user.token).await["_id"], u["_id"]);
}

#[tokio::test]
async fn registration_mails_a_token_that_verifies_the_address_once() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let mails = api.mails_to("ada@example.com", 1).await;
    assert_eq!(mails[0].subject, "Verify your email address");
    let token = token_in(&mails[0].body);
    let r = api
        .send(
            reqwest::Method::PUT,
            &format!("/auth/verify-email/{token}"),
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.code(), "EMAIL_VERIFIED");
    let me = api.me(&user.token).await;
    assert_eq!(me["emailVerified"], true);
    assert_eq!(me["__v"], 1);
    let again = api
        .send(
            reqwest::Method::PUT,
            &format!("/auth/verify-email/{token}"),
            None,
            None,
        )
        .await;
    assert_eq!((again.status, again.code()), (400, "INVALID_TOKEN"));
}

/// The token line of a mail (the line after the blank line that follows "token").
pub fn token_in(body: &str) -> String {
    body.lines()
        .map(str::trim)
        .find(|l| {
            l.len() == 43
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .unwrap_or_else(|| panic!("no token in {body}"))
        .to_owned()
}

#[tokio::test]
async fn an_unknown_verification_token_is_400_invalid_token() {
    let api = Api::start().await;
    let r = api
        .send(reqwest::Method::PUT, "/auth/verify-email/nope", None, None)
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_TOKEN"));
}

#[tokio::test]
async fn a_taken_username_or_email_is_409_case_insensitively() {
    let api = Api::start().await;
    api.register("ada").await;
    let r = api
        .post(
            "/auth/register",
            None,
            &[
                ("username", "ADA"),
                ("email", "x@example.com"),
                ("password", "long enough, really"),
            ],
        )
        .await;
    assert_eq!((r.status, r.code()), (409, "USERNAME_TAKEN"));
    let r = api
        .post(
            "/auth/register",
            None,
            &[
                ("username", "bob"),
                ("email", "ADA@example.com"),
                ("password", "long enough, really"),
            ],
        )
        .await;
    assert_eq!((r.status, r.code()), (409, "EMAIL_TAKEN"));
}

#[tokio::test]
async fn registration_validates_every_field_and_names_it() {
    let api = Api::start().await;
    let cases: [(&[(&str, &str)], &str); 6] = [
        (
            &[
                ("email", "a@example.com"),
                ("password", "long enough, really"),
            ],
            "username",
        ),
        (
            &[
                ("username", "ab"),
                ("email", "a@example.com"),
                ("password", "long enough, really"),
            ],
            "username",
        ),
        (
            &[("username", "ada"), ("password", "long enough, really")],
            "email",
        ),
        (
            &[
                ("username", "ada"),
                ("email", "not-an-address"),
                ("password", "long enough, really"),
            ],
            "email",
        ),
        (
            &[
                ("username", "ada"),
                ("email", "a@example.com"),
                ("password", "short"),
            ],
            "password",
        ),
        (
            &[
                ("username", "ada"),
                ("email", "a@example.com"),
                ("password", &"x".repeat(129)),
            ],
            "password",
        ),
    ];
    for (form, field) in cases {
        let r = api.post("/auth/register", None, form).await;
        assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"), "{form:?}");
        assert!(
            r.body["message"].as_str().unwrap().starts_with(field),
            "{}",
            r.text
        );
    }
}

#[tokio::test]
async fn login_works_with_the_username_or_the_email_in_any_case() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    for login in ["ada", "ADA", "ada@example.com", "Ada@Example.COM"] {
        let r = api.login(login, &user.password, None).await;
        assert_eq!(r.status, 200, "{login}: {}", r.text);
        assert_eq!(r.body["user"]["_id"], user.id.as_str());
        assert!(r.body["accessToken"].is_string() && r.body["refreshToken"].is_string());
    }
}

#[tokio::test]
async fn wrong_credentials_are_the_same_401_whether_or_not_the_user_exists() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let wrong_password = api.login("ada", "not the password", None).await;
    let no_such_user = api.login("nobody", "not the password", None).await;
    assert_eq!(
        (wrong_password.status, wrong_password.code()),
        (401, "INVALID_CREDENTIALS")
    );
    assert_eq!(wrong_password.body, no_such_user.body);
    // Both pay for a password hash (the dummy hash has the real
    // parameters: a unit test in platform::password), so neither answers
    // faster: counted, not timed.
    for login in ["ada", "nobody"] {
        let before = verifications(&api).await;
        api.login(login, "not the password", None).await;
        assert_eq!(verifications(&api).await, before + 1, "{login}");
    }
    let _ = user;
}

/// Password hashes computed so far by this process.
async fn verifications(api: &Api) -> u64 {
    api.app
        .metrics()
        .await
        .lines()
        .find_map(|l| l.strip_prefix("keel_password_verifications_total "))
        .map_or(0, |n| n.trim().parse().unwrap())
}

#[tokio::test]
async fn login_needs_both_fields() {
    let api = Api::start().await;
    let r = api.post("/auth/login", None, &[("login", "ada")]).await;
    assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"));
    assert!(r.body["message"].as_str().unwrap().contains("password"));
}

#[tokio::test]
async fn refresh_rotates_the_pair_and_a_reused_refresh_token_revokes_the_session() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .post("/auth/refresh", None, &[("refreshToken", &user.refresh)])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let rotated = user_from(&r, &user.password);
    assert_ne!(rotated.refresh, user.refresh);
    api.me(&rotated.token).await;

    // The spent token again: the session ends, for every token of it.
    let reuse = api
        .post("/auth/refresh", None, &[("refreshToken", &user.refresh)])
        .await;
    assert_eq!(reuse.status, 401, "{}", reuse.text);
    assert_eq!(api.get("/account", &rotated.token).await.status, 401);
    let after = api
        .post("/auth/refresh", None, &[("refreshToken", &rotated.refresh)])
        .await;
    assert_eq!(after.status, 401);
}

#[tokio::test]
async fn an_unknown_refresh_token_is_401_and_a_missing_one_400() {
    let api = Api::start().await;
    let r = api
        .post("/auth/refresh", None, &[("refreshToken", "nope")])
        .await;
    assert_eq!((r.status, r.code()), (401, "UNAUTHORIZED"));
    let r = api.post("/auth/refresh", None, &[]).await;
    assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"));
}

#[tokio::test]
async fn refresh_tokens_expire_with_their_session() {
    let api = Api::with(&[("KEEL_ACCOUNTS_REFRESH_TTL_SECS", "1")]).await;
    let user = api.register("ada").await;
    let expired = keel_testkit::eventually_async(Duration::from_secs(5), || async {
        (api.get("/account", &user.token).await.status == 401).then_some(())
    })
    .await;
    assert!(expired.is_some(), "the session expired");
    let r = api
        .post("/auth/refresh", None, &[("refreshToken", &user.refresh)])
        .await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn logout_ends_the_session_at_once() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api.post("/auth/logout", Some(&user.token), &[]).await;
    assert_eq!((r.status, r.code()), (200, "LOGGED_OUT"));
    assert_eq!(api.get("/account", &user.token).await.status, 401);
    let r = api
        .post("/auth/refresh", None, &[("refreshToken", &user.refresh)])
        .await;
    assert_eq!(r.status, 401);
}
