//! Operators: added from the command line (or by an operator holding the
//! `operators` role), each with a password and a TOTP second factor made
//! at once, and roles per area.

use chrono::Utc;
use keel_platform::console::{Role, Roles};
use keel_platform::crypto::{SecretBox, random_token};
use keel_platform::db::{Db, is_unique_violation};
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, IntoActiveModel, QueryFilter, QueryOrder,
    Set,
};
use keel_platform::{password, totp};

use crate::entity::{operator, session};

#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    #[error("an operator's name is 1 to 60 letters, digits or . _ - @")]
    BadName,
    #[error("an operator named {0:?} exists already")]
    Exists(String),
    #[error("no operator is named {0:?}")]
    NotFound(String),
    #[error("no role is named {0:?} (roles: users, jobs, push, forms, operators)")]
    UnknownRole(String),
    #[error("the password is too easy to guess: {0}")]
    Guessable(String),
    #[error(transparent)]
    Hash(#[from] password::HashError),
    #[error("making the second factor failed: {0}")]
    Secret(keel_platform::failure::Cause),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What adding an operator gives, once: the password (when generated) and
/// the second factor to put in an authenticator app.
pub struct Added {
    pub operator: operator::Model,
    pub password: Option<String>,
    pub totp_base32: String,
    pub otpauth_url: String,
}

/// The roles of `names`, each known.
pub fn roles(names: &[String]) -> Result<Roles, OperatorError> {
    names
        .iter()
        .flat_map(|n| n.split(','))
        .filter(|n| !n.trim().is_empty())
        .map(|n| Role::parse(n).ok_or_else(|| OperatorError::UnknownRole(n.trim().to_owned())))
        .collect::<Result<Vec<_>, _>>()
        .map(Roles::of)
}

fn name_ok(name: &str) -> bool {
    (1..=60).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-@".contains(&b))
}

/// A new operator named `name` with `roles`; the password given, or one
/// generated (and returned).
pub async fn add(
    db: &Db,
    secrets: &SecretBox,
    name: &str,
    roles: &Roles,
    given: Option<String>,
) -> Result<Added, OperatorError> {
    if !name_ok(name) {
        return Err(OperatorError::BadName);
    }
    let generated = given.is_none();
    let password = given.unwrap_or_else(|| random_token(18));
    if let Some(why) = password::too_guessable(&password, &[name]) {
        return Err(OperatorError::Guessable(why));
    }
    let hash = password::hash(password.clone()).await?;
    let secret = totp::new_secret();
    let base32 = totp::base32(&secret);
    let url = totp::otpauth_url(&secret, "keel console", name).map_err(OperatorError::Secret)?;
    let created = operator::ActiveModel {
        name: Set(name.to_owned()),
        name_key: Set(name.to_lowercase()),
        password_hash: Set(hash),
        totp_secret: Set(secrets.seal(base32.as_bytes())),
        totp_last_step: Set(0),
        roles: Set(roles.stored()),
        disabled_at: Set(None),
        created_at: Set(Utc::now()),
        ..Default::default()
    }
    .insert(db.write())
    .await;
    match created {
        Ok(operator) => Ok(Added {
            operator,
            password: generated.then_some(password),
            totp_base32: base32,
            otpauth_url: url,
        }),
        Err(e) if is_unique_violation(&e) => Err(OperatorError::Exists(name.to_owned())),
        Err(e) => Err(e.into()),
    }
}

/// The operator named `name` (without case).
pub async fn find(db: &Db, name: &str) -> Result<Option<operator::Model>, DbErr> {
    operator::Entity::find()
        .filter(operator::Column::NameKey.eq(name.trim().to_lowercase()))
        .one(db.read())
        .await
}

async fn named(db: &Db, name: &str) -> Result<operator::Model, OperatorError> {
    find(db, name)
        .await?
        .ok_or_else(|| OperatorError::NotFound(name.to_owned()))
}

/// Every operator, by name.
pub async fn list(db: &Db) -> Result<Vec<operator::Model>, DbErr> {
    operator::Entity::find()
        .order_by_asc(operator::Column::NameKey)
        .all(db.read())
        .await
}

/// Removes the operator and ends its sessions.
pub async fn remove(db: &Db, name: &str) -> Result<operator::Model, OperatorError> {
    let op = named(db, name).await?;
    end_sessions(db, op.id).await?;
    operator::Entity::delete_by_id(op.id)
        .exec(db.write())
        .await?;
    Ok(op)
}

/// Disables (or enables) the operator; disabling ends its sessions.
pub async fn set_disabled(
    db: &Db,
    name: &str,
    disabled: bool,
) -> Result<operator::Model, OperatorError> {
    let op = named(db, name).await?;
    if disabled {
        end_sessions(db, op.id).await?;
    }
    let mut active = op.into_active_model();
    active.disabled_at = Set(disabled.then(Utc::now));
    Ok(active.update(db.write()).await?)
}

/// Sets a new password (given, or generated and returned); the
/// operator's sessions end.
pub async fn set_password(
    db: &Db,
    name: &str,
    given: Option<String>,
) -> Result<Option<String>, OperatorError> {
    let op = named(db, name).await?;
    let generated = given.is_none();
    let password = given.unwrap_or_else(|| random_token(18));
    if let Some(why) = password::too_guessable(&password, &[&op.name]) {
        return Err(OperatorError::Guessable(why));
    }
    let hash = password::hash(password.clone()).await?;
    end_sessions(db, op.id).await?;
    let mut active = op.into_active_model();
    active.password_hash = Set(hash);
    active.update(db.write()).await?;
    Ok(generated.then_some(password))
}

/// Replaces the operator's roles: (before, after).
pub async fn set_roles(
    db: &Db,
    name: &str,
    roles: &Roles,
) -> Result<(Roles, operator::Model), OperatorError> {
    let op = named(db, name).await?;
    let before = Roles::from_stored(&op.roles);
    let mut active = op.into_active_model();
    active.roles = Set(roles.stored());
    Ok((before, active.update(db.write()).await?))
}

/// Ends every session of the operator.
pub async fn end_sessions(db: &Db, operator_id: i64) -> Result<u64, DbErr> {
    Ok(session::Entity::delete_many()
        .filter(session::Column::OperatorId.eq(operator_id))
        .exec(db.write())
        .await?
        .rows_affected)
}
