//! Registration, login, logout and email verification.

use chrono::Utc;
use keel_platform::crypto;
use keel_platform::db::is_unique_violation;
use keel_platform::mail::{self, Mail};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set,
};

use super::fields::{Email, Password, Username};
use super::sessions::{self, TokenPair};
use super::{two_factor, users};
use crate::auth::extract::{Client, banned};
use crate::entity::{email_verification, user};
use crate::error::Error;
use crate::id::new_id;
use crate::state::AppState;
use keel_platform::password;

pub struct Registration {
    pub username: Username,
    pub email: Email,
    pub password: Password,
}

const VERIFY_TTL_HOURS: i64 = 24;

/// Creates the user, opens its first session and sends the verification mail.
pub async fn register(
    state: &AppState,
    r: Registration,
    client: &Client,
) -> Result<(user::Model, TokenPair), Error> {
    let db = state.db();
    if users::username_taken(db.read(), &r.username.key(), None).await? {
        return Err(users::username_taken_error());
    }
    if users::email_taken(db.read(), &r.email.key(), None).await? {
        return Err(users::email_taken_error());
    }
    let hash = password::hash(r.password.into_inner())
        .await
        .map_err(Error::internal)?;
    let now = Utc::now();
    let model = user::ActiveModel {
        id: Set(new_id()),
        username: Set(r.username.as_str().to_owned()),
        username_key: Set(r.username.key()),
        email: Set(r.email.as_str().to_owned()),
        email_key: Set(r.email.key()),
        slug: Set(r.username.key()),
        role: Set("user".to_owned()),
        password_hash: Set(hash),
        two_factor: Set(false),
        totp_secret: Set(None),
        totp_pending: Set(None),
        totp_last_step: Set(0),
        email_verified: Set(false),
        is_banned: Set(false),
        streamer_mode: Set(false),
        notify_weekly_goals: Set(true),
        revision: Set(0),
        created_at: Set(now),
        updated_at: Set(now),
    };
    let txn = db.begin_write().await?;
    let created = match model.insert(&txn).await {
        Ok(u) => u,
        Err(e) if is_unique_violation(&e) => {
            drop(txn);
            // Lost a race with another registration: say which value.
            return Err(
                if users::username_taken(db.read(), &r.username.key(), None).await? {
                    users::username_taken_error()
                } else {
                    users::email_taken_error()
                },
            );
        }
        Err(e) => return Err(e.into()),
    };
    send_verification(&txn, state, &created).await?;
    let pair = sessions::open(&txn, state, &created.id, client).await?;
    txn.commit().await?;
    Ok((created, pair))
}

async fn send_verification<C: ConnectionTrait>(
    conn: &C,
    state: &AppState,
    u: &user::Model,
) -> Result<(), Error> {
    let token = crypto::random_token(32);
    email_verification::ActiveModel {
        token_hash: Set(crypto::sha256_hex(token.as_bytes())),
        user_id: Set(u.id.clone()),
        email: Set(u.email.clone()),
        expires_at: Set(Utc::now() + chrono::Duration::hours(VERIFY_TTL_HOURS)),
    }
    .insert(conn)
    .await?;
    let link = state
        .cfg
        .email_verify_link
        .as_ref()
        .map(|base| format!("\nOr open {base}{token}\n"))
        .unwrap_or_default();
    let text = format!(
        "Hello {name},\n\nConfirm your email address with this token (valid {VERIFY_TTL_HOURS} hours):\n\n{token}\n{link}",
        name = u.username,
    );
    mail::enqueue(
        conn,
        Mail {
            to: u.email.clone(),
            subject: "Verify your email address".to_owned(),
            text,
        },
    )
    .await?;
    Ok(())
}

fn invalid_credentials() -> Error {
    Error::unauthorized("INVALID_CREDENTIALS", "Invalid login or password")
}

/// Checks the credentials (and the second factor when it is on) and opens a
/// session. An unknown login costs the same password hash as a known one.
pub async fn login(
    state: &AppState,
    login: &str,
    pass: String,
    code: Option<String>,
    client: &Client,
) -> Result<(user::Model, TokenPair), Error> {
    let db = state.db();
    let found = users::find_by_login(db.read(), login).await?;
    let hash = found
        .as_ref()
        .map_or_else(|| state.dummy_hash.clone(), |u| u.password_hash.clone());
    let matches = password::verify(pass, hash).await;
    let u = match found {
        Some(u) if matches => u,
        _ => return Err(invalid_credentials()),
    };
    if u.is_banned {
        return Err(banned());
    }
    if u.two_factor {
        let code = code.filter(|c| !c.trim().is_empty()).ok_or_else(|| {
            Error::unauthorized("TWO_FACTOR_REQUIRED",
                "Two-factor authentication is on: send a code from the authenticator app or a backup code",
            )
        })?;
        two_factor::check_second_factor(state, &u, &code)
            .await
            .map_err(|e| match e.code() {
                Some("INVALID_CODE") => Error::unauthorized("INVALID_CODE", e.message()),
                _ => e,
            })?;
    }
    let txn = db.begin_write().await?;
    let pair = sessions::open(&txn, state, &u.id, client).await?;
    txn.commit().await?;
    Ok((u, pair))
}

/// Confirms the address a verification mail went to.
pub async fn verify_email(state: &AppState, token: &str) -> Result<(), Error> {
    let db = state.db();
    let invalid = || Error::bad_request("INVALID_TOKEN", "The token is unknown or has expired");
    let hash = crypto::sha256_hex(token.as_bytes());
    let v = email_verification::Entity::find_by_id(hash.as_str())
        .one(db.read())
        .await?
        .filter(|v| v.expires_at > Utc::now())
        .ok_or_else(invalid)?;
    let u = users::find(db.read(), &v.user_id).await?;
    if u.email != v.email {
        return Err(invalid());
    }
    let txn = db.begin_write().await?;
    if !u.email_verified {
        users::update(&u.id)
            .col_expr(user::Column::EmailVerified, Expr::value(true))
            .exec(&txn)
            .await?;
    }
    email_verification::Entity::delete_many()
        .filter(email_verification::Column::UserId.eq(u.id.as_str()))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    state.user_changed(&u.id).await;
    Ok(())
}
