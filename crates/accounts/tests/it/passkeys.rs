//! Passkeys: adding, listing, renaming and removing them, and signing in
//! with one (no username, or a named user), on either backend.

use keel_testkit::authenticator::SoftPasskey;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{Api, is_iso_millis, is_object_id};
use crate::passkey_helpers::{RP_ID, browser, passkey_api};
use crate::two_factor::enable;

#[tokio::test]
async fn a_passkey_is_added_then_signs_in_without_a_username_as_a_login_does() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let r = api.passkey_options(&ada).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let pk = &r.body["publicKey"];
    assert_eq!(pk["rp"]["id"], RP_ID);
    assert_eq!(pk["user"]["name"], "ada");
    assert_eq!(pk["authenticatorSelection"]["residentKey"], "preferred");
    assert_eq!(pk["authenticatorSelection"]["userVerification"], "required");
    assert_eq!(r.body["ceremonyId"].as_str().map(str::len), Some(32));

    let (mut key, credential) = SoftPasskey::create(&r.body, &browser());
    let body =
        json!({"ceremonyId": r.body["ceremonyId"], "name": " Laptop ", "credential": credential});
    let r = api
        .send_json(Method::POST, "/account/passkeys", Some(&ada.token), &body)
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(is_object_id(&r.body["_id"]));
    assert_eq!(r.body["name"], "Laptop");
    assert!(is_iso_millis(&r.body["createdAt"]));
    assert!(r.body["lastUsedAt"].is_null());

    let options = api.sign_in_options(None).await;
    assert!(
        options.body["publicKey"]
            .get("allowCredentials")
            .is_none_or(|a| a.as_array().is_some_and(Vec::is_empty))
    );
    assert_eq!(options.body["publicKey"]["userVerification"], "required");
    let answer = key.get(&options.body, &browser());
    let r = api
        .sign_in_with(options.body["ceremonyId"].as_str().unwrap(), &answer)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["user"]["username"], "ada");
    let token = r.body["accessToken"].as_str().unwrap();
    assert!(r.body["refreshToken"].is_string());
    assert_eq!(api.me(token).await["_id"], ada.id.as_str());
    // A session with its device, as a password sign-in opens.
    let sessions = api.get("/account/sessions", token).await;
    assert_eq!(sessions.status, 200, "{}", sessions.text);
    assert_eq!(sessions.body["sessions"].as_array().map(Vec::len), Some(2));

    let list = api.get("/account/passkeys", token).await;
    assert_eq!(list.status, 200, "{}", list.text);
    assert_eq!(list.body.as_array().map(Vec::len), Some(1));
    assert!(is_iso_millis(&list.body[0]["lastUsedAt"]));
}

#[tokio::test]
async fn a_named_user_is_offered_only_their_passkeys_and_another_users_is_refused() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let bob = api.register("bob").await;
    let ada_key = api.add_passkey(&ada).await;
    let mut bob_key = api.add_passkey(&bob).await;

    let options = api.sign_in_options(Some("ADA@example.com")).await;
    let allowed = options.body["publicKey"]["allowCredentials"]
        .as_array()
        .unwrap();
    assert_eq!(allowed.len(), 1);
    let ada_id = base64_url(&ada_key.credential_id);
    assert_eq!(allowed[0]["id"], ada_id.as_str());
    let answer = bob_key.get(&options.body, &browser());
    let r = api
        .sign_in_with(options.body["ceremonyId"].as_str().unwrap(), &answer)
        .await;
    assert_eq!(
        (r.status, r.code()),
        (401, "INVALID_CREDENTIALS"),
        "{}",
        r.text
    );

    // An unknown login, or a user without passkeys, gets the same options
    // as no login (nothing tells them apart).
    let carol = api.register("carol").await;
    for login in ["nobody", "carol"] {
        let o = api.sign_in_options(Some(login)).await;
        assert!(
            o.body["publicKey"]["allowCredentials"]
                .as_array()
                .is_none_or(Vec::is_empty),
            "{login}: {}",
            o.text
        );
    }
    let _ = carol;
    // Bob's own key still signs him in with his name.
    let options = api.sign_in_options(Some("bob")).await;
    let answer = bob_key.get(&options.body, &browser());
    let r = api
        .sign_in_with(options.body["ceremonyId"].as_str().unwrap(), &answer)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["user"]["username"], "bob");
}

fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test]
async fn a_passkey_sign_in_satisfies_two_factor() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let mut key = api.add_passkey(&ada).await;
    let secret = enable(&api, &ada).await;
    assert!(!secret.is_empty());
    let r = api.login("ada", &ada.password, None).await;
    assert_eq!(r.code(), "TWO_FACTOR_REQUIRED");
    let r = api.sign_in(&mut key).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["user"]["twoFactor"], true);
}

#[tokio::test]
async fn with_two_factor_on_adding_a_passkey_asks_for_a_code_too() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let secret = enable(&api, &ada).await;
    let r = api.passkey_options(&ada).await;
    assert_eq!(
        (r.status, r.code()),
        (400, "TWO_FACTOR_REQUIRED"),
        "{}",
        r.text
    );
    let code = crate::two_factor::code(&secret, crate::two_factor::now() + 30);
    let r = api
        .post(
            "/account/passkeys/registration",
            Some(&ada.token),
            &[("password", &ada.password), ("code", &code)],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = api
        .post(
            "/account/passkeys/registration",
            Some(&ada.token),
            &[("password", "wrong password")],
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_PASSWORD"));
    let r = api
        .post("/account/passkeys/registration", Some(&ada.token), &[])
        .await;
    assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"));
    assert!(r.text.contains("password"), "{}", r.text);
}

#[tokio::test]
async fn a_passkey_is_renamed_and_removed_with_the_password_and_then_signs_in_no_more() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let bob = api.register("bob").await;
    let mut key = api.add_passkey(&ada).await;
    let id = api.get("/account/passkeys", &ada.token).await.body[0]["_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/account/passkeys/{id}");
    let r = api
        .send(
            Method::PATCH,
            &path,
            Some(&ada.token),
            Some(&[("name", "Phone")]),
        )
        .await;
    assert_eq!(
        (r.status, r.body["name"].as_str()),
        (200, Some("Phone")),
        "{}",
        r.text
    );
    for (name, why) in [
        ("", "blank"),
        ("   ", "blank"),
        (&"x".repeat(65)[..], "too long"),
    ] {
        let r = api
            .send(
                Method::PATCH,
                &path,
                Some(&ada.token),
                Some(&[("name", name)]),
            )
            .await;
        assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"), "{why}");
    }
    // Bob can neither rename nor remove it; a bad id is 400.
    let r = api
        .send(
            Method::PATCH,
            &path,
            Some(&bob.token),
            Some(&[("name", "Mine")]),
        )
        .await;
    assert_eq!((r.status, r.code()), (404, "NOT_FOUND"));
    let r = api
        .send(
            Method::DELETE,
            &path,
            Some(&bob.token),
            Some(&[("password", &bob.password)]),
        )
        .await;
    assert_eq!((r.status, r.code()), (404, "NOT_FOUND"));
    let r = api
        .send(
            Method::DELETE,
            "/account/passkeys/nope",
            Some(&ada.token),
            Some(&[("password", &ada.password)]),
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_ID"));
    let r = api
        .send(
            Method::DELETE,
            &path,
            Some(&ada.token),
            Some(&[("password", "wrong password")]),
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "INVALID_PASSWORD"));
    let r = api
        .send(
            Method::DELETE,
            &path,
            Some(&ada.token),
            Some(&[("password", &ada.password)]),
        )
        .await;
    assert_eq!((r.status, r.code()), (200, "PASSKEY_DELETED"), "{}", r.text);
    assert_eq!(
        api.get("/account/passkeys", &ada.token).await.body,
        json!([])
    );
    let r = api.sign_in(&mut key).await;
    assert_eq!((r.status, r.code()), (401, "INVALID_CREDENTIALS"));
    // The password is still a way in: removing the last passkey locks no one out.
    assert_eq!(api.login("ada", &ada.password, None).await.status, 200);
}

#[tokio::test]
async fn without_a_relying_party_passkeys_answer_404_passkeys_disabled() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let r = api.passkey_options(&ada).await;
    assert_eq!((r.status, r.code()), (404, "PASSKEYS_DISABLED"));
    let r = api
        .send_json(Method::POST, "/auth/passkey/options", None, &json!({}))
        .await;
    assert_eq!((r.status, r.code()), (404, "PASSKEYS_DISABLED"));
    assert_eq!(
        api.get("/account/passkeys", &ada.token).await.body,
        json!([])
    );
    for file in [
        "/.well-known/apple-app-site-association",
        "/.well-known/assetlinks.json",
    ] {
        let r = api.send(Method::GET, file, None, None).await;
        assert_eq!((r.status, r.code()), (404, "NOT_FOUND"), "{file}");
    }
}

#[tokio::test]
async fn the_association_files_for_ios_and_android_come_from_configuration() {
    let fingerprint = (0..32)
        .map(|i| format!("{i:02X}"))
        .collect::<Vec<_>>()
        .join(":");
    let android = format!("com.example.app={fingerprint}");
    let api = passkey_api(&[
        ("KEEL_ACCOUNTS_APPLE_APP_IDS", "ABCDE12345.com.example.app"),
        ("KEEL_ACCOUNTS_ANDROID_APPS", &android),
    ])
    .await;
    let r = api
        .send(
            Method::GET,
            "/.well-known/apple-app-site-association",
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"webcredentials": {"apps": ["ABCDE12345.com.example.app"]}})
    );
    let r = api
        .send(Method::GET, "/.well-known/assetlinks.json", None, None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body[0]["target"]["package_name"], "com.example.app");
    assert_eq!(
        r.body[0]["target"]["sha256_cert_fingerprints"][0],
        fingerprint.as_str()
    );
    assert!(
        r.body[0]["relation"]
            .as_array()
            .unwrap()
            .contains(&json!("delegate_permission/common.get_login_creds"))
    );
}

#[tokio::test]
async fn the_export_lists_passkeys_and_deletion_leaves_no_trace_of_them() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let key = api.add_passkey(&ada).await;
    // A ceremony left open is the user's too.
    assert_eq!(api.passkey_options(&ada).await.status, 200);
    let r = api.get("/account/export", &ada.token).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["passkeys"][0]["name"], "Passkey");
    assert!(r.body["passkeys"][0].get("credential").is_none());
    let r = api
        .send(
            Method::DELETE,
            "/account",
            Some(&ada.token),
            Some(&[("password", &ada.password)]),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let rows = keel_testkit::scan::every_row(&api.app.platform().db).await;
    let cred = base64_url(&key.credential_id);
    for needle in [ada.id.as_str(), cred.as_str()] {
        let found: Vec<_> = rows.iter().filter(|(_, r)| r.contains(needle)).collect();
        assert!(found.is_empty(), "{needle} is still in {found:?}");
    }
}
