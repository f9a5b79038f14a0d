//! The channel's owner: created once by the set-up (or the CLI), signed in
//! with email and password; each signed-in browser is a server-side
//! session, revocable and expiring.

use chrono::{DateTime, Utc};
use keel_platform::config::Secret;
use keel_platform::crypto::{random_token, sha256_hex};
use keel_platform::db::{Db, is_unique_violation};
use keel_platform::guard::{Knock, Throttled};
use keel_platform::password;
use keel_platform::sea_orm::sea_query::{Expr, OnConflict};
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, ExprTrait, PaginatorTrait, QueryFilter, Set,
};

use super::setup_code;
use super::values::{Email, NewPassword};
use crate::entity::{auth_session, channel_config, owner};

/// Why the owner could not be set up or set.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("The channel is set up already")]
    SetUpAlready,
    #[error(
        "The set-up code is wrong: keel printed it in its log when it started \
         (or it is KEEL_CHANNEL_SETUP_CODE)"
    )]
    WrongCode,
    #[error(transparent)]
    Hash(#[from] password::HashError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// The signed-in owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub email: String,
    /// The session's token hash (to end it).
    pub session: String,
    pub expires_at: DateTime<Utc>,
}

pub async fn exists(db: &Db) -> Result<bool, DbErr> {
    Ok(owner::Entity::find().count(db.read()).await? > 0)
}

/// What the set-up creates: the owner and the channel's title; and the
/// set-up code that allows it.
pub struct Setup {
    pub code: String,
    pub email: Email,
    pub password: NewPassword,
    pub title: String,
    pub description: String,
}

/// Creates the owner and names the channel, in one transaction, if the
/// set-up code is valid (UNAUTHORIZED otherwise); CONFLICT once an owner
/// exists (the set-up runs once). The set-up codes go with it.
pub async fn set_up(db: &Db, s: Setup, configured_code: Option<&Secret>) -> Result<(), SetupError> {
    let hash = password::hash(s.password.into_inner()).await?;
    let now = Utc::now();
    let txn = db.begin_write().await?;
    if owner::Entity::find().count(&txn).await? > 0 {
        return Err(SetupError::SetUpAlready);
    }
    if !setup_code::valid(&txn, configured_code, &s.code).await? {
        return Err(SetupError::WrongCode);
    }
    setup_code::clear(&txn).await?;
    let created = owner::ActiveModel {
        id: Set(owner::ID),
        email: Set(s.email.as_str().to_owned()),
        password_hash: Set(hash),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(&txn)
    .await;
    match created {
        Err(e) if is_unique_violation(&e) => return Err(SetupError::SetUpAlready),
        other => other?,
    };
    channel_config::Entity::update_many()
        .col_expr(channel_config::Column::Title, Expr::value(s.title))
        .col_expr(
            channel_config::Column::Description,
            Expr::value(s.description),
        )
        .col_expr(channel_config::Column::UpdatedAt, Expr::value(now))
        .filter(channel_config::Column::Id.eq(channel_config::ID))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(())
}

/// Creates the owner or replaces its email and password (the operator's
/// CLI); every session of the old credentials ends.
pub async fn set(db: &Db, email: &Email, password: NewPassword) -> Result<(), SetupError> {
    let hash = password::hash(password.into_inner()).await?;
    let now = Utc::now();
    let txn = db.begin_write().await?;
    owner::Entity::insert(owner::ActiveModel {
        id: Set(owner::ID),
        email: Set(email.as_str().to_owned()),
        password_hash: Set(hash),
        created_at: Set(now),
        updated_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(owner::Column::Id)
            .update_columns([
                owner::Column::Email,
                owner::Column::PasswordHash,
                owner::Column::UpdatedAt,
            ])
            .to_owned(),
    )
    .exec_without_returning(&txn)
    .await?;
    auth_session::Entity::delete_many().exec(&txn).await?;
    setup_code::clear(&txn).await?;
    txn.commit().await?;
    Ok(())
}

/// Why a sign-in could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error(transparent)]
    Throttled(#[from] Throttled),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Checks the credentials of an attempt the guard let in (`knock`, which
/// is told how it ended); the same cost and answer whether the email or
/// the password is wrong.
pub async fn check(
    db: &Db,
    email: &str,
    password: &str,
    mut knock: Knock<'_>,
) -> Result<bool, SignInError> {
    let found = owner::Entity::find_by_id(owner::ID).one(db.read()).await?;
    let (email_ok, hash) = match &found {
        Some(o) => (
            o.email == email.trim().to_lowercase(),
            Some(o.password_hash.clone()),
        ),
        None => (false, None),
    };
    let password_ok = knock.verify(password.to_owned(), hash).await?;
    if email_ok && password_ok {
        knock.accepted();
    } else {
        knock.refused();
    }
    Ok(email_ok && password_ok)
}

/// Opens a session; its token (for the cookie).
pub async fn open_session(db: &Db, ttl: chrono::Duration) -> Result<String, DbErr> {
    let token = random_token(32);
    let now = Utc::now();
    auth_session::ActiveModel {
        token_hash: Set(sha256_hex(token.as_bytes())),
        owner_id: Set(owner::ID),
        created_at: Set(now),
        expires_at: Set(now + ttl),
    }
    .insert(db.write())
    .await?;
    Ok(token)
}

/// The owner of an unexpired session.
pub async fn find_session(db: &Db, token: &str) -> Result<Option<Owner>, DbErr> {
    let hash = sha256_hex(token.as_bytes());
    let Some(s) = auth_session::Entity::find_by_id(hash.as_str())
        .filter(auth_session::Column::ExpiresAt.gt(Utc::now()))
        .one(db.read())
        .await?
    else {
        return Ok(None);
    };
    let o = owner::Entity::find_by_id(s.owner_id).one(db.read()).await?;
    Ok(o.map(|o| Owner {
        email: o.email,
        session: s.token_hash,
        expires_at: s.expires_at,
    }))
}

/// Ends the session (and prunes expired ones).
pub async fn close_session(db: &Db, token_hash: &str) -> Result<(), DbErr> {
    auth_session::Entity::delete_many()
        .filter(
            auth_session::Column::TokenHash
                .eq(token_hash)
                .or(auth_session::Column::ExpiresAt.lt(Utc::now())),
        )
        .exec(db.write())
        .await?;
    Ok(())
}
