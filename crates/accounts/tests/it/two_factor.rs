use keel_platform::totp;
use reqwest::Method;

use crate::helpers::{Api, User};

pub fn now() -> u64 {
    u64::try_from(chrono::Utc::now().timestamp()).unwrap()
}

pub fn code(secret_b32: &str, at: u64) -> String {
    let secret = totp::from_base32(secret_b32).unwrap();
    totp::code_at(&secret, at).unwrap()
}

/// POST then PUT: two-factor on; returns the secret.
pub async fn enable(api: &Api, user: &User) -> String {
    let r = api
        .post("/account/two-factor", Some(&user.token), &[])
        .await;
    assert_eq!(
        (r.status, r.code()),
        (200, "PENDING_VERIFICATION"),
        "{}",
        r.text
    );
    let secret = r.body["twoFactorSecret"].as_str().unwrap().to_owned();
    let r = api
        .put(
            "/account/two-factor",
            &user.token,
            &[("code", &code(&secret, now()))],
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (200, "TWO_FACTOR_ENABLED"),
        "{}",
        r.text
    );
    secret
}

pub async fn backup_codes(api: &Api, user: &User) -> Vec<String> {
    let r = api
        .get("/account/two-factor/backup-codes", &user.token)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.headers["content-type"], "text/plain; charset=utf-8");
    r.text.split(' ').map(str::to_owned).collect()
}

#[tokio::test]
async fn two_factor_end_to_end_with_codes_from_the_returned_secret() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .post("/account/two-factor", Some(&user.token), &[])
        .await;
    assert_eq!(r.status, 200);
    assert!(r.body["error"].is_string());
    assert!(
        r.body["qrcode"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    let secret = r.body["twoFactorSecret"].as_str().unwrap().to_owned();
    assert!(
        secret.len() >= 32
            && secret
                .bytes()
                .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
    );
    assert_eq!(
        api.me(&user.token).await["twoFactor"],
        false,
        "pending is not on"
    );

    let r = api
        .put(
            "/account/two-factor",
            &user.token,
            &[("code", &code(&secret, now()))],
        )
        .await;
    assert_eq!((r.status, r.code()), (200, "TWO_FACTOR_ENABLED"));
    let me = api.me(&user.token).await;
    assert_eq!(me["twoFactor"], true);
    assert_eq!(me["__v"], 1);

    let codes = backup_codes(&api, &user).await;
    assert_eq!(codes.len(), 10);
    assert!(
        codes
            .iter()
            .all(|c| c.len() == 8 && c.bytes().all(|b| b.is_ascii_digit()))
    );

    // Login now needs a second factor.
    let r = api.login("ada", &user.password, None).await;
    assert_eq!((r.status, r.code()), (401, "TWO_FACTOR_REQUIRED"));
    let r = api
        .login("ada", &user.password, Some(&code(&secret, now() + 30)))
        .await;
    assert_eq!(r.status, 200, "a fresh TOTP code: {}", r.text);
    let r = api.login("ada", &user.password, Some(&codes[0])).await;
    assert_eq!(r.status, 200, "a backup code: {}", r.text);
    let r = api.login("ada", &user.password, Some(&codes[0])).await;
    assert_eq!(
        (r.status, r.code()),
        (401, "INVALID_CODE"),
        "a backup code works once"
    );
    assert_eq!(backup_codes(&api, &user).await.len(), 9);

    let r = api
        .send(
            Method::DELETE,
            &format!("/account/two-factor?code={}", codes[1]),
            Some(&user.token),
            None,
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (200, "TWO_FACTOR_DISABLED"),
        "{}",
        r.text
    );
    let me = api.me(&user.token).await;
    assert_eq!(me["twoFactor"], false);
    assert_eq!(api.login("ada", &user.password, None).await.status, 200);
}

#[tokio::test]
async fn two_factor_can_be_turned_off_with_a_totp_code() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let secret = enable(&api, &user).await;
    let c = code(&secret, now() + 30);
    let r = api
        .send(
            Method::DELETE,
            &format!("/account/two-factor?code={c}"),
            Some(&user.token),
            None,
        )
        .await;
    assert_eq!((r.status, r.code()), (200, "TWO_FACTOR_DISABLED"));
}

#[tokio::test]
async fn a_totp_code_is_accepted_once() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let secret = enable(&api, &user).await;
    let c = code(&secret, now() + 30);
    assert_eq!(api.login("ada", &user.password, Some(&c)).await.status, 200);
    let r = api.login("ada", &user.password, Some(&c)).await;
    assert_eq!((r.status, r.code()), (401, "INVALID_CODE"));
    let used = code(&secret, now());
    let r = api.login("ada", &user.password, Some(&used)).await;
    assert_eq!(r.status, 401, "the enabling code's step is spent too");
}

#[tokio::test]
async fn starting_two_factor_while_it_is_on_is_409() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    enable(&api, &user).await;
    let r = api
        .post("/account/two-factor", Some(&user.token), &[])
        .await;
    assert_eq!((r.status, r.code()), (409, "TWO_FACTOR_ALREADY_ENABLED"));
    let r = api
        .put("/account/two-factor", &user.token, &[("code", "123456")])
        .await;
    assert_eq!((r.status, r.code()), (409, "TWO_FACTOR_ALREADY_ENABLED"));
}

#[tokio::test]
async fn confirming_with_nothing_pending_is_409() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .put("/account/two-factor", &user.token, &[("code", "123456")])
        .await;
    assert_eq!((r.status, r.code()), (409, "TWO_FACTOR_NOT_PENDING"));
}

#[tokio::test]
async fn a_missing_code_is_400_naming_it() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    api.post("/account/two-factor", Some(&user.token), &[])
        .await;
    let r = api.put("/account/two-factor", &user.token, &[]).await;
    assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"));
    assert!(r.body["message"].as_str().unwrap().starts_with("code"));
    enable(&api, &user).await;
    let r = api.delete("/account/two-factor", &user.token).await;
    assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"));
}

#[tokio::test]
async fn wrong_codes_are_400_and_after_five_in_fifteen_minutes_everything_is_429() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .post("/account/two-factor", Some(&user.token), &[])
        .await;
    let secret = r.body["twoFactorSecret"].as_str().unwrap().to_owned();
    let good = code(&secret, now());
    let wrong = if good == "000000" { "111111" } else { "000000" };
    for _ in 0..5 {
        let r = api
            .put("/account/two-factor", &user.token, &[("code", wrong)])
            .await;
        assert_eq!((r.status, r.code()), (400, "INVALID_CODE"));
    }
    let r = api
        .put("/account/two-factor", &user.token, &[("code", &good)])
        .await;
    assert_eq!(
        (r.status, r.code()),
        (429, "TOO_MANY_ATTEMPTS"),
        "even a right code waits"
    );
    let wait: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=900).contains(&wait));
    // Once the failures are older than the window, codes work again.
    age_code_failures(&api, 16).await;
    let r = api
        .put("/account/two-factor", &user.token, &[("code", &good)])
        .await;
    assert_eq!(
        (r.status, r.code()),
        (200, "TWO_FACTOR_ENABLED"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn backup_codes_while_two_factor_is_off_are_403() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .get("/account/two-factor/backup-codes", &user.token)
        .await;
    assert_eq!((r.status, r.code()), (403, "TWO_FACTOR_NOT_ENABLED"));
}

#[tokio::test]
async fn turning_off_what_is_off_is_409() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .delete("/account/two-factor?code=123456", &user.token)
        .await;
    assert_eq!((r.status, r.code()), (409, "TWO_FACTOR_NOT_ENABLED"));
}

#[tokio::test]
async fn secrets_and_backup_codes_are_not_stored_in_the_clear() {
    use keel_platform::sea_orm::{ConnectionTrait, Statement};
    let api = Api::start().await;
    let user = api.register("ada").await;
    let secret = enable(&api, &user).await;
    let codes = backup_codes(&api, &user).await;
    let db = api.app.platform().db.read();
    let rows = db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT totp_secret AS v FROM accounts_users UNION ALL SELECT sealed_code AS v FROM accounts_backup_codes",
        ))
        .await
        .unwrap();
    let stored: Vec<String> = rows
        .iter()
        .filter_map(|r| r.try_get::<Option<String>>("", "v").ok().flatten())
        .collect();
    assert_eq!(stored.len(), 11);
    for s in &stored {
        assert!(!s.contains(&secret));
        assert!(codes.iter().all(|c| !s.contains(c.as_str())));
    }
}

async fn age_code_failures(api: &Api, minutes: i64) {
    use keel_accounts::entity::code_failure::{Column, Entity};
    use keel_platform::sea_orm::EntityTrait;
    use keel_platform::sea_orm::sea_query::Expr;
    Entity::update_many()
        .col_expr(
            Column::FailedAt,
            Expr::value(chrono::Utc::now() - chrono::Duration::minutes(minutes)),
        )
        .exec(api.app.platform().db.write())
        .await
        .unwrap();
}
