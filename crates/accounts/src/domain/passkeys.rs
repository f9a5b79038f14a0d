//! A signed-in user's passkeys: adding one (a registration ceremony, after
//! re-checking the person), listing, renaming and removing them. The
//! password always stays, so removing the last passkey never locks anyone
//! out (see docs/accounts.md).

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use keel_platform::db::{Db, is_unique_violation};
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, Set,
};
use serde::{Deserialize, Serialize};
use webauthn_rs::prelude::{
    CreationChallengeResponse, Passkey, PasskeyRegistration, RegisterPublicKeyCredential, Uuid,
    WebauthnError,
};
use webauthn_rs_proto::ResidentKeyRequirement;

use super::passkey_ceremonies::{self, CeremonyError, Kind};
use super::proof::{self, Proof, ProofError};
use super::two_factor::Keys;
use crate::entity::passkey::{self, ActiveModel, Column, Entity};
use crate::entity::user;
use crate::id::PasskeyId;
use crate::identity::webauthn::{Framed, RelyingParty};

/// Passkeys one user may hold.
pub const MAX_PASSKEYS: u64 = 20;

/// Why a passkey step was refused.
#[derive(Debug, thiserror::Error)]
pub enum PasskeyError {
    #[error("Passkeys are not enabled on this server")]
    Disabled,
    #[error("The passkey ceremony is unknown, was already used or has expired: start again")]
    NoCeremony,
    #[error("The passkey was refused: {0}")]
    Rejected(&'static str),
    #[error("This passkey is already registered")]
    AlreadyRegistered,
    #[error("A user may hold at most 20 passkeys")]
    LimitReached,
    #[error("Passkey not found")]
    NotFound,
    #[error(transparent)]
    Proof(#[from] ProofError),
    #[error("the relying party could not start the ceremony: {0}")]
    Webauthn(WebauthnError),
    #[error(transparent)]
    Ceremony(#[from] CeremonyError),
    #[error("the passkey could not be written: {0}")]
    Encode(#[source] serde_json::Error),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Why webauthn-rs refused a response, in words a client developer acts on.
pub fn refusal(e: &WebauthnError) -> &'static str {
    match e {
        WebauthnError::MismatchedChallenge => "it answers another challenge",
        WebauthnError::InvalidRPOrigin => "it was made on an origin this server does not allow",
        WebauthnError::InvalidRPIDHash => "it is for another relying party id",
        WebauthnError::UserNotVerified | WebauthnError::UserNotPresent => {
            "the authenticator did not verify the user"
        }
        WebauthnError::CredentialPossibleCompromise => {
            "its signature counter went backwards (a cloned authenticator?)"
        }
        WebauthnError::CredentialNotFound => "unknown passkey",
        WebauthnError::SignatureInvalid | WebauthnError::AuthenticationFailure => {
            "the signature does not verify"
        }
        _ => "the response is malformed or not a passkey response",
    }
}

/// Why a framed ceremony was refused, as the client reads it.
pub fn framing_refusal(e: Framed) -> &'static str {
    match e {
        Framed::ByAnotherSite => "it was made inside a frame of a site this server does not allow",
        Framed::Unreadable => "the response is malformed or not a passkey response",
    }
}

/// The registration's state between start and finish.
#[derive(Serialize, Deserialize)]
struct Registering {
    handle: Uuid,
    state: PasskeyRegistration,
}

/// The user's passkeys, oldest first.
pub async fn list<C: ConnectionTrait>(
    conn: &C,
    user_id: &str,
) -> Result<Vec<passkey::Model>, DbErr> {
    Entity::find()
        .filter(Column::UserId.eq(user_id))
        .order_by_asc(Column::CreatedAt)
        .order_by_asc(Column::Id)
        .all(conn)
        .await
}

/// A credential id as stored: base64url without padding.
pub fn credential_key(id: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(id)
}

/// Starts a registration for `u` after checking `proof`: the options for
/// `navigator.credentials.create` (a resident key preferred, user
/// verification required, the user's passkeys excluded) and the ceremony id.
pub async fn start_registration(
    k: Keys<'_>,
    rp: Option<&RelyingParty>,
    ttl: Duration,
    u: &user::Model,
    proof: Proof<'_>,
) -> Result<(String, CreationChallengeResponse), PasskeyError> {
    let rp = &rp.ok_or(PasskeyError::Disabled)?.webauthn;
    proof::check(k, u, proof).await?;
    let held = list(k.db.read(), &u.id).await?;
    if held.len() as u64 >= MAX_PASSKEYS {
        return Err(PasskeyError::LimitReached);
    }
    let handle = held
        .first()
        .and_then(|p| Uuid::parse_str(&p.user_handle).ok())
        .unwrap_or_else(Uuid::new_v4);
    let exclude = held
        .iter()
        .filter_map(|p| URL_SAFE_NO_PAD.decode(&p.credential_id).ok())
        .collect();
    let (mut options, state) = rp
        .start_passkey_registration(handle, &u.username, &u.username, Some(exclude))
        .map_err(PasskeyError::Webauthn)?;
    if let Some(sel) = options.public_key.authenticator_selection.as_mut() {
        sel.resident_key = Some(ResidentKeyRequirement::Preferred);
    }
    let expires = Utc::now() + ttl;
    let state = Registering { handle, state };
    let id = passkey_ceremonies::put(k.db, Kind::Register, Some(&u.id), &state, expires).await?;
    Ok((id, options))
}

/// Finishes a registration: checks the attestation against the ceremony
/// and stores the passkey as `name`.
pub async fn finish_registration(
    db: &Db,
    rp: Option<&RelyingParty>,
    u: &user::Model,
    ceremony_id: &str,
    name: String,
    credential: &RegisterPublicKeyCredential,
) -> Result<passkey::Model, PasskeyError> {
    let rp = &rp.ok_or(PasskeyError::Disabled)?.webauthn;
    let reg: Registering = passkey_ceremonies::take(db, ceremony_id, Kind::Register, Some(&u.id))
        .await?
        .ok_or(PasskeyError::NoCeremony)?;
    // An authenticator answering with a passkey it already holds for this
    // site (the user's own is also refused by the exclusion list, with a
    // less telling error; another user's by the unique index below).
    let known = Entity::find()
        .filter(Column::CredentialId.eq(credential_key(&credential.raw_id)))
        .one(db.read())
        .await?;
    if known.is_some() {
        return Err(PasskeyError::AlreadyRegistered);
    }
    RelyingParty::check_registration_framing(&credential.response.client_data_json).map_err(
        |e| {
            tracing::info!(user = %u.id, error = %e, "passkey registration refused");
            PasskeyError::Rejected(framing_refusal(e))
        },
    )?;
    let key = rp
        .finish_passkey_registration(credential, &reg.state)
        .map_err(|e| {
            tracing::info!(user = %u.id, error = ?e, "passkey registration refused");
            PasskeyError::Rejected(refusal(&e))
        })?;
    insert(db, u, reg.handle, name, &key).await
}

async fn insert(
    db: &Db,
    u: &user::Model,
    handle: Uuid,
    name: String,
    key: &Passkey,
) -> Result<passkey::Model, PasskeyError> {
    let txn = db.begin_write().await?;
    let held = Entity::find()
        .filter(Column::UserId.eq(u.id.as_str()))
        .count(&txn)
        .await?;
    if held >= MAX_PASSKEYS {
        return Err(PasskeyError::LimitReached);
    }
    let credential = serde_json::to_string(key).map_err(PasskeyError::Encode)?;
    let row = ActiveModel {
        id: Set(PasskeyId::generate().into_string()),
        user_id: Set(u.id.clone()),
        user_handle: Set(handle.to_string()),
        credential_id: Set(credential_key(key.cred_id())),
        credential: Set(credential),
        name: Set(name),
        sign_count: Set(0),
        created_at: Set(Utc::now()),
        last_used_at: Set(None),
    }
    .insert(&txn)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            PasskeyError::AlreadyRegistered
        } else {
            PasskeyError::Db(e)
        }
    })?;
    txn.commit().await?;
    tracing::info!(user = %u.id, passkey = %row.id, "passkey registered");
    Ok(row)
}

/// Renames one of the user's passkeys.
pub async fn rename(
    db: &Db,
    user_id: &str,
    id: &PasskeyId,
    name: String,
) -> Result<passkey::Model, PasskeyError> {
    let found = Entity::find_by_id(id.as_str())
        .filter(Column::UserId.eq(user_id))
        .one(db.write())
        .await?
        .ok_or(PasskeyError::NotFound)?;
    let mut row: ActiveModel = found.into();
    row.name = Set(name);
    Ok(row.update(db.write()).await?)
}

/// Removes one of the user's passkeys after checking `proof`.
pub async fn delete(
    k: Keys<'_>,
    u: &user::Model,
    id: &PasskeyId,
    proof: Proof<'_>,
) -> Result<(), PasskeyError> {
    proof::check(k, u, proof).await?;
    remove(k, u, id).await
}

/// Removes one of the user's passkeys (an operator's removal of a lost
/// one, after checking who asks).
pub async fn remove(k: Keys<'_>, u: &user::Model, id: &PasskeyId) -> Result<(), PasskeyError> {
    let gone = Entity::delete_many()
        .filter(Column::Id.eq(id.as_str()))
        .filter(Column::UserId.eq(u.id.as_str()))
        .exec(k.db.write())
        .await?;
    if gone.rows_affected == 0 {
        return Err(PasskeyError::NotFound);
    }
    tracing::info!(user = %u.id, passkey = %id, "passkey removed");
    Ok(())
}
