//! A passkey ceremony made inside a frame of another site (WebAuthn's
//! `crossOrigin` and `topOrigin`): a registration is always refused; a
//! sign-in only when the framing page is one the operator listed in
//! `KEEL_ACCOUNTS_WEBAUTHN_TOP_ORIGINS`.

use keel_testkit::authenticator::SoftPasskey;
use serde_json::json;

use crate::helpers::Api;
use crate::passkey_helpers::{browser, passkey_api};

const EVIL: &str = "https://evil.example.com";
const PORTAL: &str = "https://portal.example.org";

async fn framed_sign_in(api: &Api, key: &mut SoftPasskey, top: &str) -> crate::helpers::Resp {
    let options = api.sign_in_options(None).await;
    let credential = key.get(&options.body, &browser().framed_by(top));
    api.sign_in_with(options.body["ceremonyId"].as_str().unwrap(), &credential)
        .await
}

async fn framed_registration(api: &Api, name: &str, top: &str) -> crate::helpers::Resp {
    let ada = api.register(name).await;
    let options = api.passkey_options(&ada).await.body;
    let (_, credential) = SoftPasskey::create(&options, &browser().framed_by(top));
    let r = api
        .passkey_finish(&ada, options["ceremonyId"].as_str().unwrap(), &credential)
        .await;
    assert_eq!(
        api.get("/account/passkeys", &ada.token).await.body,
        json!([])
    );
    r
}

#[tokio::test]
async fn a_sign_in_framed_by_another_site_is_401_and_opens_no_session() {
    let api = passkey_api(&[]).await;
    let ada = api.register("ada").await;
    let mut key = api.add_passkey(&ada).await;
    for top in [EVIL, PORTAL] {
        let r = framed_sign_in(&api, &mut key, top).await;
        assert_eq!(
            (r.status, r.code()),
            (401, "INVALID_CREDENTIALS"),
            "{}",
            r.text
        );
        assert!(r.text.contains("inside a frame"), "{}", r.text);
    }
    let sessions = api.get("/account/sessions", &ada.token).await;
    assert_eq!(sessions.body["sessions"].as_array().map(Vec::len), Some(1));
    // The same passkey, unframed, still signs in.
    assert_eq!(api.sign_in(&mut key).await.status, 200);
}

#[tokio::test]
async fn a_sign_in_framed_by_a_listed_site_is_accepted_and_no_other_is() {
    let api = passkey_api(&[("KEEL_ACCOUNTS_WEBAUTHN_TOP_ORIGINS", PORTAL)]).await;
    let ada = api.register("ada").await;
    let mut key = api.add_passkey(&ada).await;
    let r = framed_sign_in(&api, &mut key, PORTAL).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.body["accessToken"].is_string(), "{}", r.text);
    let r = framed_sign_in(&api, &mut key, EVIL).await;
    assert_eq!(
        (r.status, r.code()),
        (401, "INVALID_CREDENTIALS"),
        "{}",
        r.text
    );
    assert!(r.text.contains("inside a frame"), "{}", r.text);
}

#[tokio::test]
async fn a_registration_framed_by_another_site_is_400_with_or_without_listed_sites() {
    for env in [
        &[][..],
        &[("KEEL_ACCOUNTS_WEBAUTHN_TOP_ORIGINS", PORTAL)][..],
    ] {
        let api = passkey_api(env).await;
        for (name, top) in [("ada", EVIL), ("bob", PORTAL)] {
            let r = framed_registration(&api, name, top).await;
            assert_eq!(
                (r.status, r.code()),
                (400, "PASSKEY_REJECTED"),
                "{env:?} {top}: {}",
                r.text
            );
        }
    }
}
