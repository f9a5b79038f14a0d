//! Signing in with a passkey: options for `navigator.credentials.get`
//! (discoverable, so no username is needed, or for the passkeys of a named
//! user), then the assertion, answered like a password sign-in. A passkey
//! sign-in is user-verified (something held and something known or
//! biometric), so it satisfies two-factor by itself.

use std::time::Duration;

use chrono::Utc;
use keel_platform::db::Db;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QuerySelect, Set,
};
use serde::{Deserialize, Serialize};
use webauthn_rs::prelude::{
    DiscoverableAuthentication, Passkey, PasskeyAuthentication, PublicKeyCredential,
    RequestChallengeResponse, WebauthnError,
};

use super::passkey_ceremonies::{self, Kind};
use super::passkeys::{PasskeyError, credential_key, framing_refusal, list, refusal};
use super::sessions::{self, Client, Issuer, TokenPair};
use super::users;
use crate::entity::{passkey, user};
use crate::id::UserId;
use crate::identity::webauthn::RelyingParty;

/// Why a passkey sign-in was refused.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// The response did not prove the passkey (signature, origin, rp id,
    /// challenge, user verification, a counter gone backwards).
    #[error("The passkey was refused: {0}")]
    Refused(&'static str),
    /// No passkey with this credential id, or not the one this ceremony
    /// asked for.
    #[error("Unknown passkey")]
    UnknownPasskey,
    #[error("This account is banned")]
    Banned,
    #[error(transparent)]
    Passkey(#[from] PasskeyError),
    #[error(transparent)]
    Session(#[from] sessions::SessionError),
}

impl From<keel_platform::sea_orm::DbErr> for SignInError {
    fn from(e: keel_platform::sea_orm::DbErr) -> Self {
        Self::Passkey(PasskeyError::Db(e))
    }
}

/// The sign-in's state between start and finish.
#[derive(Serialize, Deserialize)]
enum SigningIn {
    /// Any discoverable passkey of any user.
    Discoverable(DiscoverableAuthentication),
    /// One of this user's passkeys.
    User {
        user_id: String,
        state: PasskeyAuthentication,
    },
}

/// Options for `navigator.credentials.get` and the ceremony id. With a
/// `login` (username or email) naming a user with passkeys, only theirs
/// are allowed; otherwise (no login, an unknown one, a user without
/// passkeys: the answer does not say which) any discoverable passkey.
pub async fn start(
    db: &Db,
    rp: Option<&RelyingParty>,
    ttl: Duration,
    login: Option<&str>,
) -> Result<(String, RequestChallengeResponse), PasskeyError> {
    let rp = &rp.ok_or(PasskeyError::Disabled)?.webauthn;
    let user = match login {
        Some(login) => users::find_by_login(db.read(), login).await?,
        None => None,
    };
    let keys = match &user {
        Some(u) => list(db.read(), &u.id).await?,
        None => Vec::new(),
    };
    let keys: Vec<Passkey> = keys
        .iter()
        .filter_map(|k| serde_json::from_str(&k.credential).ok())
        .collect();
    let (mut options, state) = match user {
        Some(u) if !keys.is_empty() => {
            let (options, state) = rp
                .start_passkey_authentication(&keys)
                .map_err(PasskeyError::Webauthn)?;
            (
                options,
                SigningIn::User {
                    user_id: u.id,
                    state,
                },
            )
        }
        _ => {
            let (options, state) = rp
                .start_discoverable_authentication()
                .map_err(PasskeyError::Webauthn)?;
            (options, SigningIn::Discoverable(state))
        }
    };
    // A modal sign-in (a button); a client wanting the autofill UI sets
    // `mediation: "conditional"` itself.
    options.mediation = None;
    let expires = Utc::now() + ttl;
    let id = passkey_ceremonies::put(db, Kind::SignIn, None, &state, expires).await?;
    Ok((id, options))
}

/// Checks the assertion against the ceremony and the stored passkey,
/// records its use, and opens a session as a password sign-in does.
pub async fn finish(
    db: &Db,
    rp: Option<&RelyingParty>,
    issuer: &Issuer<'_>,
    ceremony_id: &str,
    credential: &PublicKeyCredential,
    client: &Client,
) -> Result<(user::Model, TokenPair), SignInError> {
    let party = rp.ok_or(PasskeyError::Disabled)?;
    let rp = &party.webauthn;
    let state: SigningIn = passkey_ceremonies::take(db, ceremony_id, Kind::SignIn, None)
        .await
        .map_err(PasskeyError::from)?
        .ok_or(PasskeyError::NoCeremony)?;
    party
        .check_sign_in_framing(&credential.response.client_data_json)
        .map_err(|e| {
            tracing::info!(error = %e, "passkey sign-in refused");
            SignInError::Refused(framing_refusal(e))
        })?;
    // The passkey's row is locked from here to the commit, so two sign-ins
    // with one passkey are checked against each other's counters in turn.
    let txn = db.begin_write().await?;
    let row = passkey::Entity::find()
        .filter(passkey::Column::CredentialId.eq(credential_key(credential.get_credential_id())))
        .lock_exclusive()
        .one(&txn)
        .await?
        .ok_or(SignInError::UnknownPasskey)?;
    let mut key: Passkey =
        serde_json::from_str(&row.credential).map_err(|_| SignInError::UnknownPasskey)?;
    let checked = match state {
        SigningIn::Discoverable(state) => {
            let (handle, _) = rp
                .identify_discoverable_authentication(credential)
                .map_err(|e| SignInError::Refused(refusal(&e)))?;
            if handle.to_string() != row.user_handle {
                return Err(SignInError::UnknownPasskey);
            }
            rp.finish_discoverable_authentication_v2(credential, state, &key)
        }
        SigningIn::User { user_id, state } => {
            if user_id != row.user_id {
                return Err(SignInError::UnknownPasskey);
            }
            rp.finish_passkey_authentication(credential, &state)
        }
    };
    // webauthn-rs checks the counter against the key the ceremony was
    // started with; a sign-in since may have raised it: check the stored one.
    let count = checked.as_ref().map_or(0, |r| i64::from(r.counter()));
    let result = checked
        .and_then(|r| {
            if (count > 0 || row.sign_count > 0) && count <= row.sign_count {
                Err(WebauthnError::CredentialPossibleCompromise)
            } else {
                Ok(r)
            }
        })
        .map_err(|e| {
            if matches!(e, WebauthnError::CredentialPossibleCompromise) {
                tracing::warn!(user = %row.user_id, passkey = %row.id,
                    "passkey sign-in refused: the signature counter went backwards (a cloned authenticator?)");
            } else {
                tracing::info!(user = %row.user_id, passkey = %row.id, error = ?e, "passkey sign-in refused");
            }
            SignInError::Refused(refusal(&e))
        })?;
    let u = users::find(&txn, &UserId::stored(row.user_id.clone()))
        .await
        .map_err(sessions::SessionError::from)?;
    if u.banned_now() {
        return Err(SignInError::Banned);
    }
    key.update_credential(&result);
    let mut used: passkey::ActiveModel = row.into();
    if let Ok(json) = serde_json::to_string(&key) {
        used.credential = Set(json);
    }
    used.sign_count = Set(count);
    used.last_used_at = Set(Some(Utc::now()));
    used.update(&txn).await?;
    let pair = sessions::open(&txn, issuer, &u.id, client).await?;
    txn.commit().await?;
    Ok((u, pair))
}
