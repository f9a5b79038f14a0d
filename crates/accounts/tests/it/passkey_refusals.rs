//! Every way a passkey ceremony is refused, named in the error: a wrong
//! challenge, origin or relying party, no user verification, a ceremony
//! reused, expired, unknown or another user's, an unknown passkey or
//! another user's, a counter gone backwards, a banned user, too many tries.

use keel_accounts::entity::passkey_ceremony::{Column, Entity};
use keel_platform::sea_orm::EntityTrait;
use keel_platform::sea_orm::sea_query::Expr;
use keel_testkit::authenticator::{Answer, SoftPasskey};
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Api, User};
use crate::passkey_helpers::{browser, passkey_api};

async fn expire_ceremonies(api: &Api) {
    Entity::update_many()
        .col_expr(
            Column::ExpiresAt,
            Expr::value(chrono::Utc::now() - chrono::Duration::seconds(1)),
        )
        .exec(api.app.platform().db.write())
        .await
        .unwrap();
}

/// Every bent answer, and the refusal it gets.
fn bent_answers() -> Vec<(&'static str, Answer)> {
    let other_challenge = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".to_owned();
    vec![
        (
            "another challenge",
            Answer {
                challenge: Some(other_challenge),
                ..browser()
            },
        ),
        ("another origin", Answer::on("http://localhost:6666")),
        ("another site", Answer::on("https://evil.example")),
        (
            "another relying party id",
            Answer {
                rp_id: Some("example.com".into()),
                ..browser()
            },
        ),
        (
            "no user verification",
            Answer {
                user_verified: false,
                ..browser()
            },
        ),
    ]
}

async fn options_for(api: &Api, user: &User) -> Value {
    let r = api.passkey_options(user).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body
}

fn ceremony(options: &Value) -> &str {
    options["ceremonyId"].as_str().unwrap()
}

#[tokio::test]
async fn a_registration_with_a_bent_answer_is_400_passkey_rejected_and_stores_nothing() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    for (why, answer) in bent_answers() {
        let options = options_for(&api, &ada).await;
        let (_, credential) = SoftPasskey::create(&options, &answer);
        let r = api
            .passkey_finish(&ada, ceremony(&options), &credential)
            .await;
        assert_eq!(
            (r.status, r.code()),
            (400, "PASSKEY_REJECTED"),
            "{why}: {}",
            r.text
        );
    }
    assert_eq!(
        api.get("/account/passkeys", &ada.token).await.body,
        json!([])
    );
}

#[tokio::test]
async fn a_registration_ceremony_is_single_use_bounded_and_its_users_own() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let bob = api.register("bob").await;
    // Used once.
    let options = options_for(&api, &ada).await;
    let (key, credential) = SoftPasskey::create(&options, &browser());
    assert_eq!(
        api.passkey_finish(&ada, ceremony(&options), &credential)
            .await
            .status,
        201
    );
    let r = api
        .passkey_finish(&ada, ceremony(&options), &credential)
        .await;
    assert_eq!(
        (r.status, r.code()),
        (400, "INVALID_CEREMONY"),
        "{}",
        r.text
    );
    // Another user's ceremony.
    let options = options_for(&api, &ada).await;
    let (_, credential) = SoftPasskey::create(&options, &browser());
    let r = api
        .passkey_finish(&bob, ceremony(&options), &credential)
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_CEREMONY"));
    // Expired.
    let options = options_for(&api, &ada).await;
    let (_, credential) = SoftPasskey::create(&options, &browser());
    expire_ceremonies(&api).await;
    let r = api
        .passkey_finish(&ada, ceremony(&options), &credential)
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_CEREMONY"));
    // Unknown, malformed, missing.
    let r = api
        .passkey_finish(&ada, &"ab".repeat(16), &credential)
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_CEREMONY"));
    let r = api
        .passkey_finish(&ada, "not-a-ceremony", &credential)
        .await;
    assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"));
    assert!(r.text.contains("ceremonyId"), "{}", r.text);
    let options = options_for(&api, &ada).await;
    let body = json!({"ceremonyId": ceremony(&options)});
    let r = api
        .send_json(Method::POST, "/account/passkeys", Some(&ada.token), &body)
        .await;
    assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"));
    assert!(r.text.contains("credential"), "{}", r.text);
    let body = json!({"ceremonyId": ceremony(&options), "credential": {"id": 7}});
    let r = api
        .send_json(Method::POST, "/account/passkeys", Some(&ada.token), &body)
        .await;
    assert_eq!(
        (r.status, r.code()),
        (400, "VALIDATION_ERROR"),
        "{}",
        r.text
    );
    assert!(r.text.contains("credential"), "{}", r.text);
    // The same authenticator again: for ada excluded, for bob taken.
    let options = options_for(&api, &ada).await;
    let r = api
        .passkey_finish(&ada, ceremony(&options), &key.attest(&options, &browser()))
        .await;
    assert_eq!(
        (r.status, r.code()),
        (409, "PASSKEY_ALREADY_REGISTERED"),
        "{}",
        r.text
    );
    let options = options_for(&api, &bob).await;
    let r = api
        .passkey_finish(&bob, ceremony(&options), &key.attest(&options, &browser()))
        .await;
    assert_eq!(
        (r.status, r.code()),
        (409, "PASSKEY_ALREADY_REGISTERED"),
        "{}",
        r.text
    );
    assert_eq!(
        api.get("/account/passkeys", &bob.token).await.body,
        json!([])
    );
}

#[tokio::test]
async fn a_sign_in_with_a_bent_answer_is_401_and_opens_no_session() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let mut key = api.add_passkey(&ada).await;
    for (why, answer) in bent_answers() {
        let options = api.sign_in_options(None).await;
        let credential = key.get(&options.body, &answer);
        let r = api.sign_in_with(ceremony(&options.body), &credential).await;
        assert_eq!(
            (r.status, r.code()),
            (401, "INVALID_CREDENTIALS"),
            "{why}: {}",
            r.text
        );
        assert!(r.text.contains("refused"), "{why}: {}", r.text);
    }
    let sessions = api.get("/account/sessions", &ada.token).await;
    assert_eq!(sessions.body["sessions"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_sign_in_ceremony_is_single_use_and_bounded_and_an_unknown_passkey_is_401() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let mut key = api.add_passkey(&ada).await;
    let options = api.sign_in_options(None).await;
    let credential = key.get(&options.body, &browser());
    assert_eq!(
        api.sign_in_with(ceremony(&options.body), &credential)
            .await
            .status,
        200
    );
    let r = api.sign_in_with(ceremony(&options.body), &credential).await;
    assert_eq!((r.status, r.code()), (400, "INVALID_CEREMONY"));
    let options = api.sign_in_options(None).await;
    let credential = key.get(&options.body, &browser());
    expire_ceremonies(&api).await;
    let r = api.sign_in_with(ceremony(&options.body), &credential).await;
    assert_eq!((r.status, r.code()), (400, "INVALID_CEREMONY"));
    // A passkey keel never registered.
    let stranger_options = json!({"publicKey": {"rp": {"id": "localhost"}, "user": {"id": "AAAA"}, "challenge": "AAAA"}});
    let (mut stranger, _) = SoftPasskey::create(&stranger_options, &browser());
    let options = api.sign_in_options(None).await;
    let credential = stranger.get(&options.body, &browser());
    let r = api.sign_in_with(ceremony(&options.body), &credential).await;
    assert_eq!(
        (r.status, r.code()),
        (401, "INVALID_CREDENTIALS"),
        "{}",
        r.text
    );
    // Ada's credential id with another user handle: not ada's passkey.
    let options = api.sign_in_options(None).await;
    let mut credential = key.get(&options.body, &browser());
    credential["response"]["userHandle"] = json!("AAAAAAAAAAAAAAAAAAAAAA");
    let r = api.sign_in_with(ceremony(&options.body), &credential).await;
    assert_eq!(
        (r.status, r.code()),
        (401, "INVALID_CREDENTIALS"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn a_counter_gone_backwards_is_refused_as_a_cloned_authenticator() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let mut key = api.add_passkey(&ada).await;
    key.counter = 5;
    assert_eq!(api.sign_in(&mut key).await.status, 200);
    key.counter = 2;
    let r = api.sign_in(&mut key).await;
    assert_eq!(
        (r.status, r.code()),
        (401, "INVALID_CREDENTIALS"),
        "{}",
        r.text
    );
    assert!(r.text.contains("counter"), "{}", r.text);
    key.counter = 10;
    assert_eq!(api.sign_in(&mut key).await.status, 200);
}

#[tokio::test]
async fn a_counter_is_checked_against_the_latest_sign_in_not_the_ceremonys_start() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let mut key = api.add_passkey(&ada).await;
    key.counter = 5;
    assert_eq!(api.sign_in(&mut key).await.status, 200);
    // A ceremony for ada started now allows her passkey as it is (6)...
    let early = api.sign_in_options(Some("ada")).await;
    // ...then she signs in again (11)...
    key.counter = 10;
    assert_eq!(api.sign_in(&mut key).await.status, 200);
    // ...and a copy of the key still at 7 answers the early ceremony.
    key.counter = 6;
    let credential = key.get(&early.body, &browser());
    let r = api.sign_in_with(ceremony(&early.body), &credential).await;
    assert_eq!(
        (r.status, r.code()),
        (401, "INVALID_CREDENTIALS"),
        "{}",
        r.text
    );
    assert!(r.text.contains("counter"), "{}", r.text);
}

#[tokio::test]
async fn a_banned_user_is_refused_as_at_login() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let mut key = api.add_passkey(&ada).await;
    api.sql(&format!(
        "UPDATE accounts_users SET is_banned = TRUE WHERE id = '{}'",
        ada.id
    ))
    .await;
    let r = api.sign_in(&mut key).await;
    assert_eq!((r.status, r.code()), (403, "ACCOUNT_BANNED"), "{}", r.text);
}

#[tokio::test]
async fn passkey_sign_ins_from_one_address_are_rate_limited() {
    let api = passkey_api(&[("KEEL_ACCOUNTS_LOGINS_PER_MINUTE", "3")]).await;
    let body = json!({});
    let mut codes = Vec::new();
    for _ in 0..4 {
        let r = api
            .send_json(Method::POST, "/auth/passkey/options", None, &body)
            .await;
        codes.push((r.status, r.code().to_owned()));
    }
    assert_eq!(codes[3], (429, "TOO_MANY_REQUESTS".to_owned()), "{codes:?}");
    // The answer too (a well-formed one: a malformed body is refused
    // before anything is looked up).
    let options = json!({"publicKey": {"rp": {"id": "localhost"}, "user": {"id": "AAAA"}, "challenge": "AAAA"}});
    let (mut stranger, _) = SoftPasskey::create(&options, &browser());
    let credential = stranger.get(&options, &browser());
    let body = json!({"ceremonyId": "ab".repeat(16), "credential": credential});
    let r = api
        .send_json(Method::POST, "/auth/passkey", None, &body)
        .await;
    assert_eq!(
        (r.status, r.code()),
        (429, "TOO_MANY_REQUESTS"),
        "{}",
        r.text
    );
}
