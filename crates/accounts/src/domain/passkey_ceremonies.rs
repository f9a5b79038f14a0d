//! The state of a passkey ceremony between its start and its finish, kept
//! in the database so the finish may reach another node than the start.
//! A ceremony is used once: taking it deletes it, and only the request
//! whose delete removed the row may use it (two finishes racing on one
//! ceremony: one wins). It lives for the authenticator's timeout; expired
//! ones are swept whenever a new one is stored.

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::sea_orm::{ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, QueryFilter, Set};
use rand::RngCore;
use serde::Serialize;
use serde::de::DeserializeOwned;

use utoipa::openapi::schema::{ObjectBuilder, Type};

use super::invalid::Invalid;
use super::sent::{Field, documented_fields};
use crate::entity::passkey_ceremony::{ActiveModel, Column, Entity};

/// What a ceremony is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Register,
    SignIn,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Register => "register",
            Kind::SignIn => "sign-in",
        }
    }
}

/// Why a ceremony could not be stored or read back.
#[derive(Debug, thiserror::Error)]
pub enum CeremonyError {
    #[error("the ceremony state could not be written: {0}")]
    State(#[from] serde_json::Error),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// A ceremony id as a client sends it: 32 hexadecimal characters.
pub struct CeremonyId(String);

impl CeremonyId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Field for CeremonyId {
    fn parse(field: &str, raw: String) -> Result<Self, Invalid> {
        if raw.len() == 32 && raw.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(Self(raw))
        } else {
            Err(Invalid::new(field, "must be 32 hexadecimal characters"))
        }
    }

    fn schema() -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(r"^[0-9a-fA-F]{32}$"))
    }
}

documented_fields!(CeremonyId);

/// Stores `state` until `expires_at`; answers the ceremony's id.
pub async fn put(
    db: &Db,
    kind: Kind,
    user_id: Option<&str>,
    state: &impl Serialize,
    expires_at: DateTime<Utc>,
) -> Result<String, CeremonyError> {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    let id = hex::encode(bytes);
    let txn = db.begin_write().await?;
    Entity::delete_many()
        .filter(Column::ExpiresAt.lt(Utc::now()))
        .exec(&txn)
        .await?;
    ActiveModel {
        id: Set(id.clone()),
        user_id: Set(user_id.map(str::to_owned)),
        kind: Set(kind.as_str().to_owned()),
        state: Set(serde_json::to_string(state)?),
        expires_at: Set(expires_at),
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    Ok(id)
}

/// The state of ceremony `id` if it is of `kind`, for `user_id`, not
/// expired and not taken before; it is gone afterwards whatever the answer.
pub async fn take<S: DeserializeOwned>(
    db: &Db,
    id: &str,
    kind: Kind,
    user_id: Option<&str>,
) -> Result<Option<S>, CeremonyError> {
    let id = id.to_ascii_lowercase();
    let txn = db.begin_write().await?;
    let Some(found) = Entity::find_by_id(id.as_str()).one(&txn).await? else {
        return Ok(None);
    };
    let removed = Entity::delete_by_id(id.as_str()).exec(&txn).await?;
    txn.commit().await?;
    let usable = removed.rows_affected == 1
        && found.kind == kind.as_str()
        && found.user_id.as_deref() == user_id
        && found.expires_at > Utc::now();
    if !usable {
        return Ok(None);
    }
    // A state this version cannot read (written by another): start again.
    Ok(serde_json::from_str(&found.state).ok())
}
