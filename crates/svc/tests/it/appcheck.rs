use keel_svc::domain::settings::SettingsPatch;
use serde_json::json;

use crate::helpers::{APP_ID, FORM, Svc, good};

#[tokio::test]
async fn a_valid_token_submits_and_the_submission_is_stored() {
    let svc = Svc::start().await;
    let r = svc.submit(Some(&svc.token()), good()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["success"], true);
    assert!(r.body["id"].as_i64().unwrap() > 0);
    assert_eq!(svc.stored().await, 1);
}

#[tokio::test]
async fn the_legacy_body_field_carries_the_token_too() {
    let svc = Svc::start().await;
    let mut body = good();
    body["app_check_token"] = json!(svc.token());
    let r = svc.submit(None, body).await;
    assert_eq!(r.status, 200, "{}", r.text);
}

#[tokio::test]
async fn bad_tokens_are_403_appcheck_failed_and_nothing_is_stored() {
    let svc = Svc::start().await;
    let now = chrono::Utc::now().timestamp();
    let cases = [
        ("missing", None),
        ("malformed", Some("not-a-token".to_owned())),
        ("expired", Some(svc.token_with(|c| c["exp"] = json!(now - 3600)))),
        ("wrong issuer", Some(svc.token_with(|c| c["iss"] = json!("https://firebaseappcheck.googleapis.com/999")))),
        ("wrong audience", Some(svc.token_with(|c| c["aud"] = json!(["projects/999"])))),
        ("wrong app id", Some(svc.token_with(|c| c["sub"] = json!("1:123456789:android:other")))),
        ("unpublished kid", Some(svc.jwks.sign("k3", &json!({"iss": format!("https://firebaseappcheck.googleapis.com/{}", crate::helpers::PROJECT), "aud": [format!("projects/{}", crate::helpers::PROJECT)], "sub": APP_ID, "exp": now + 600})))),
        ("alg none", Some(svc.jwks.sign_none("k1", &json!({"sub": APP_ID, "exp": now + 600})))),
        ("HS256 with the public key", Some(svc.jwks.sign_hs256_with_public_key("k1", &json!({"sub": APP_ID, "exp": now + 600})))),
    ];
    for (what, token) in cases {
        // A bad body too: the token is judged first.
        let r = svc
            .submit(token.as_deref(), json!({"fields": "nope"}))
            .await;
        assert_eq!(
            (r.status, r.code()),
            (403, "appcheck_failed"),
            "{what}: {}",
            r.text
        );
        assert_eq!(r.body["data"]["status"], 403);
        let r = svc.fields(FORM, token.as_deref()).await;
        assert_eq!(r.status, 403, "{what} (fields)");
    }
    assert_eq!(svc.stored().await, 0);
}

#[tokio::test]
async fn an_unknown_kid_refetches_the_keys() {
    let svc = Svc::start().await;
    assert_eq!(svc.submit(Some(&svc.token()), good()).await.status, 200);
    svc.jwks.publish(&["k1", "k2"]);
    let now = chrono::Utc::now().timestamp();
    let claims = json!({"iss": format!("https://firebaseappcheck.googleapis.com/{}", crate::helpers::PROJECT), "aud": [format!("projects/{}", crate::helpers::PROJECT)], "sub": APP_ID, "exp": now + 600});
    let r = svc
        .submit(Some(&svc.jwks.sign("k2", &claims)), good())
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
}

#[tokio::test]
async fn a_configured_debug_token_is_accepted_as_it_is() {
    let svc = Svc::start().await;
    svc.settings(SettingsPatch {
        appcheck_debug_tokens: Some(vec!["simulator-debug-token".into()]),
        ..Default::default()
    })
    .await;
    let r = svc.submit(Some("simulator-debug-token"), good()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        svc.submit(Some("other-debug-token"), good()).await.status,
        403
    );
}

/// The audit log's App Check entries, oldest first.
async fn appcheck_entries(svc: &Svc) -> Vec<keel_platform::audit::entity::Model> {
    use keel_platform::audit::entity;
    use keel_platform::sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
    entity::Entity::find()
        .filter(entity::Column::Action.eq("svc_forms_appcheck_verified"))
        .order_by_asc(entity::Column::Id)
        .all(svc.app.platform().db.read())
        .await
        .unwrap()
}

/// The audited token hashes, oldest first.
async fn audited(svc: &Svc) -> Vec<String> {
    appcheck_entries(svc)
        .await
        .into_iter()
        .filter_map(|r| r.detail)
        .map(|d| {
            serde_json::from_str::<serde_json::Value>(&d).unwrap()["token_hash"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_verified_token_whose_submission_is_refused_is_audited_all_the_same() {
    let mut events = keel_svc::domain::hooks::subscribe();
    let svc = Svc::start().await;
    let token = svc.token();
    let hash = keel_platform::crypto::sha256_hex(token.as_bytes());
    // Invalid fields, then a form that does not exist: both refused after
    // the token verified; then one stored, and one without a valid token.
    let r = svc
        .submit(Some(&token), json!({"fields": {"name": ""}}))
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(svc.submit_to("404", Some(&token), good()).await.status, 404);
    assert_eq!(svc.submit(Some(&token), good()).await.status, 200);
    assert_eq!(svc.submit(Some("forged"), good()).await.status, 403);
    assert_eq!(audited(&svc).await, vec![hash.clone(), hash.clone(), hash]);
    assert_eq!(svc.stored().await, 1, "only the accepted one is stored");
    let mut forms = Vec::new();
    while forms.len() < 3 {
        let e = tokio::time::timeout(std::time::Duration::from_secs(5), events.recv())
            .await
            .unwrap()
            .unwrap();
        if e.token == token {
            forms.push(e.form_id);
        }
    }
    assert_eq!(forms, [FORM, "404", FORM]);
}

#[tokio::test]
async fn a_verified_token_fires_the_hook_and_is_audited_without_the_raw_token() {
    let mut events = keel_svc::domain::hooks::subscribe();
    let svc = Svc::start().await;
    let token = svc.token();
    svc.submit(Some(&token), good()).await;
    let event = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        loop {
            let e = events.recv().await.unwrap();
            if e.token == token {
                return e;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(
        (event.app_id.as_str(), event.form_id.as_str()),
        (APP_ID, FORM)
    );
    let rows = appcheck_entries(&svc).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].actor.as_str(), rows[0].subject.as_deref()),
        (APP_ID, Some(FORM))
    );
    assert_eq!(
        audited(&svc).await,
        [keel_platform::crypto::sha256_hex(token.as_bytes())]
    );
    assert!(!format!("{rows:?}").contains(&token));
}

#[tokio::test]
async fn while_firebases_keys_cannot_be_fetched_a_submission_is_503_not_403() {
    let svc = Svc::with(&[(
        "KEEL_APPCHECK_JWKS_URL",
        "http://127.0.0.1:9/jwks".to_owned(),
    )])
    .await;
    let r = svc.submit(Some(&svc.token()), good()).await;
    assert_eq!(
        (r.status, r.code()),
        (503, "rest_service_unavailable"),
        "{}",
        r.text
    );
    assert_eq!(r.body["data"]["status"], 503);
    assert!(r.headers.contains_key("retry-after"));
    assert_eq!(svc.stored().await, 0);
}
