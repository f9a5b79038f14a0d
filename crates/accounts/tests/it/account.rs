use crate::helpers::{Api, is_iso_millis, is_object_id};

#[tokio::test]
async fn get_account_returns_the_user_in_the_seeds_shape() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api.get("/account", &user.token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "application/json");
    let u = &r.body["user"];
    let mut keys: Vec<&str> = u.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "__v",
            "_id",
            "createdAt",
            "email",
            "emailVerified",
            "isBanned",
            "notifications",
            "role",
            "slug",
            "streamerMode",
            "twoFactor",
            "updatedAt",
            "username"
        ]
    );
    assert!(is_object_id(&u["_id"]));
    assert!(is_iso_millis(&u["createdAt"]));
}

#[tokio::test]
async fn changing_the_password_needs_the_old_one_and_ends_every_other_session() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let other = api.login("ada", &user.password, None).await;
    let other_token = other.body["accessToken"].as_str().unwrap().to_owned();

    let wrong = api
        .put(
            "/account/change-password",
            &user.token,
            &[
                ("oldPassword", "nope nope"),
                ("newPassword", "brand new password"),
            ],
        )
        .await;
    assert_eq!((wrong.status, wrong.code()), (400, "INVALID_PASSWORD"));

    let r = api
        .put(
            "/account/change-password",
            &user.token,
            &[
                ("oldPassword", &user.password),
                ("newPassword", "brand new password"),
            ],
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (200, "PASSWORD_CHANGED"),
        "{}",
        r.text
    );
    assert!(r.body["message"].is_string());
    assert_eq!(
        api.get("/account", &other_token).await.status,
        401,
        "other sessions end"
    );
    let me = api.me(&user.token).await;
    assert_eq!(me["__v"], 1, "this session stays");
    assert_eq!(api.login("ada", &user.password, None).await.status, 401);
    assert_eq!(
        api.login("ada", "brand new password", None).await.status,
        200
    );
}

#[tokio::test]
async fn a_new_password_must_be_long_enough_and_different() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    for (new, field) in [
        ("short", "newPassword"),
        (user.password.as_str(), "newPassword"),
    ] {
        let r = api
            .put(
                "/account/change-password",
                &user.token,
                &[("oldPassword", &user.password), ("newPassword", new)],
            )
            .await;
        assert_eq!(
            (r.status, r.code()),
            (400, "VALIDATION_ERROR"),
            "{}",
            r.text
        );
        assert!(r.body["message"].as_str().unwrap().starts_with(field));
    }
    let r = api
        .put(
            "/account/change-password",
            &user.token,
            &[("newPassword", "long enough now")],
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"));
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("oldPassword")
    );
}

#[tokio::test]
async fn changing_the_username_changes_the_slug_and_the_revision() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .put(
            "/account/change-username",
            &user.token,
            &[("username", "Lovelace")],
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (200, "USERNAME_CHANGED"),
        "{}",
        r.text
    );
    assert!(r.body["message"].as_str().unwrap().contains("Lovelace"));
    let me = api.me(&user.token).await;
    assert_eq!(me["username"], "Lovelace");
    assert_eq!(me["slug"], "lovelace");
    assert_eq!(me["__v"], 1);
    assert_ne!(me["updatedAt"], me["createdAt"]);
    assert_eq!(
        api.login("lovelace", &user.password, None).await.status,
        200
    );
}

#[tokio::test]
async fn a_username_held_by_another_user_is_409_in_any_case() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    api.register("bob").await;
    let r = api
        .put(
            "/account/change-username",
            &user.token,
            &[("username", "BOB")],
        )
        .await;
    assert_eq!((r.status, r.code()), (409, "USERNAME_TAKEN"));
    let r = api
        .put(
            "/account/change-username",
            &user.token,
            &[("username", "ADA")],
        )
        .await;
    assert_eq!(
        r.status, 200,
        "changing only the case of one's own name is fine"
    );
}

#[tokio::test]
async fn a_bad_username_is_400_naming_the_field() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    for bad in ["ab", "has space", "ünï", &"x".repeat(31)] {
        let r = api
            .put(
                "/account/change-username",
                &user.token,
                &[("username", bad)],
            )
            .await;
        assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"), "{bad}");
        assert!(r.body["message"].as_str().unwrap().starts_with("username"));
    }
}
