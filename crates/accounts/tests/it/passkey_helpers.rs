//! Passkey steps over HTTP, answered by the test kit's software
//! authenticator as a browser on `ORIGIN` would answer them.

use keel_testkit::authenticator::{Answer, SoftPasskey};
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Api, Resp, User};

pub const RP_ID: &str = "localhost";
pub const ORIGIN: &str = "http://localhost:5173";

/// accounts with passkeys on, for `ORIGIN`.
pub async fn passkey_api(env: &[(&str, &str)]) -> Api {
    let mut all = vec![
        ("KEEL_ACCOUNTS_WEBAUTHN_RP_ID", RP_ID),
        ("KEEL_ACCOUNTS_WEBAUTHN_ORIGINS", ORIGIN),
    ];
    all.extend_from_slice(env);
    Api::with(&all).await
}

pub fn browser() -> Answer {
    Answer::on(ORIGIN)
}

impl Api {
    /// Registration options for `user` (proved by the password).
    pub async fn passkey_options(&self, user: &User) -> Resp {
        self.post(
            "/account/passkeys/registration",
            Some(&user.token),
            &[("password", &user.password)],
        )
        .await
    }

    /// Sends a registration's answer.
    pub async fn passkey_finish(&self, user: &User, ceremony: &str, credential: &Value) -> Resp {
        let body = json!({"ceremonyId": ceremony, "credential": credential});
        self.send_json(Method::POST, "/account/passkeys", Some(&user.token), &body)
            .await
    }

    /// Adds a passkey to `user`; the authenticator holding it.
    pub async fn add_passkey(&self, user: &User) -> SoftPasskey {
        let r = self.passkey_options(user).await;
        assert_eq!(r.status, 200, "{}", r.text);
        let (key, credential) = SoftPasskey::create(&r.body, &browser());
        let ceremony = r.body["ceremonyId"].as_str().unwrap();
        let r = self.passkey_finish(user, ceremony, &credential).await;
        assert_eq!(r.status, 201, "{}", r.text);
        key
    }

    /// Sign-in options, for `login` or any discoverable passkey.
    pub async fn sign_in_options(&self, login: Option<&str>) -> Resp {
        let body = login.map_or_else(|| json!({}), |l| json!({"login": l}));
        let r = self
            .send_json(Method::POST, "/auth/passkey/options", None, &body)
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r
    }

    /// Sends a sign-in's answer.
    pub async fn sign_in_with(&self, ceremony: &str, credential: &Value) -> Resp {
        let body = json!({"ceremonyId": ceremony, "credential": credential});
        self.send_json(Method::POST, "/auth/passkey", None, &body)
            .await
    }

    /// Signs in with `key`, no username, as a browser would.
    pub async fn sign_in(&self, key: &mut SoftPasskey) -> Resp {
        let options = self.sign_in_options(None).await;
        let credential = key.get(&options.body, &browser());
        self.sign_in_with(options.body["ceremonyId"].as_str().unwrap(), &credential)
            .await
    }
}
