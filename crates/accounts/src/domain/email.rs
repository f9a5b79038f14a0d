//! Changing the email address: a token mailed to the new address confirms
//! it; the old address is told once it is done.

use std::time::Duration;

use chrono::Utc;
use keel_platform::crypto;
use keel_platform::db::Db;
use keel_platform::mail::{self, Mail};
use keel_platform::sea_orm::sea_query::{Expr, OnConflict};
use keel_platform::sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set};

use super::fields::{Email, Invalid};
use super::users;
use crate::entity::{email_change, user};
use crate::identity::cache::SessionCache;

pub const TOKEN_TTL_HOURS: i64 = 24;

/// Why a change of address was refused.
#[derive(Debug, thiserror::Error)]
pub enum EmailChangeError {
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error("This email address is already used by another account")]
    Taken,
    #[error("No email change is pending")]
    NotPending,
    #[error("A confirmation was sent moments ago; wait before asking again")]
    TooSoon { retry_after_secs: u64 },
    #[error("The token is unknown or has expired")]
    InvalidToken,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// How confirmations are mailed.
#[derive(Clone, Copy)]
pub struct Mailing<'a> {
    /// Who the mails are from (the app's name).
    pub app_name: &'a str,
    /// Prepended to the token to make a link in the mail, if set.
    pub link: Option<&'a str>,
    /// At most one confirmation per user this often.
    pub resend_interval: Duration,
}

/// Starts (or restarts) a change to `new_email` and mails the token.
pub async fn start(
    db: &Db,
    mailing: Mailing<'_>,
    u: &user::Model,
    new_email: &Email,
) -> Result<(), EmailChangeError> {
    if new_email.key() == u.email_key {
        return Err(Invalid::new("email", "is already the address of this account").into());
    }
    if users::email_taken(db.read(), &new_email.key(), Some(&u.id)).await? {
        return Err(EmailChangeError::Taken);
    }
    let existing = pending(db.read(), &u.id).await?;
    throttle(mailing, existing.as_ref())?;
    let txn = db.begin_write().await?;
    issue(&txn, mailing, u, new_email.as_str()).await?;
    txn.commit().await?;
    Ok(())
}

/// Mails a new token for the pending change; the old token stops working.
pub async fn resend(
    db: &Db,
    mailing: Mailing<'_>,
    u: &user::Model,
) -> Result<(), EmailChangeError> {
    let existing = pending(db.read(), &u.id)
        .await?
        .ok_or(EmailChangeError::NotPending)?;
    throttle(mailing, Some(&existing))?;
    let txn = db.begin_write().await?;
    issue(&txn, mailing, u, &existing.new_email).await?;
    txn.commit().await?;
    Ok(())
}

async fn pending<C: ConnectionTrait>(
    conn: &C,
    user_id: &str,
) -> Result<Option<email_change::Model>, DbErr> {
    email_change::Entity::find_by_id(user_id).one(conn).await
}

/// One confirmation mail per interval per user.
fn throttle(
    mailing: Mailing<'_>,
    existing: Option<&email_change::Model>,
) -> Result<(), EmailChangeError> {
    let Some(e) = existing else { return Ok(()) };
    let interval = chrono::Duration::from_std(mailing.resend_interval).unwrap_or_default();
    let next = e.sent_at + interval;
    let now = Utc::now();
    if next > now {
        let wait = u64::try_from((next - now).num_seconds().max(1)).unwrap_or(1);
        return Err(EmailChangeError::TooSoon {
            retry_after_secs: wait,
        });
    }
    Ok(())
}

async fn issue<C: ConnectionTrait>(
    conn: &C,
    mailing: Mailing<'_>,
    u: &user::Model,
    to: &str,
) -> Result<(), DbErr> {
    let token = crypto::random_token(32);
    let now = Utc::now();
    let row = email_change::ActiveModel {
        user_id: Set(u.id.clone()),
        new_email: Set(to.to_owned()),
        token_hash: Set(crypto::sha256_hex(token.as_bytes())),
        expires_at: Set(now + chrono::Duration::hours(TOKEN_TTL_HOURS)),
        sent_at: Set(now),
    };
    email_change::Entity::insert(row)
        .on_conflict(
            OnConflict::column(email_change::Column::UserId)
                .update_columns([
                    email_change::Column::NewEmail,
                    email_change::Column::TokenHash,
                    email_change::Column::ExpiresAt,
                    email_change::Column::SentAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(conn)
        .await?;
    let link = mailing
        .link
        .map(|base| format!("\nOr open {base}{token}\n"))
        .unwrap_or_default();
    mail::enqueue(
        conn,
        Mail {
            from_name: Some(mailing.app_name.to_owned()),
            to: to.to_owned(),
            subject: "Confirm your new email address".to_owned(),
            text: format!(
                "Hello {name},\n\nConfirm {to} as the new address of your account with this token (valid {TOKEN_TTL_HOURS} hours):\n\n{token}\n{link}",
                name = u.username,
            ),
            ..Mail::default()
        },
    )
    .await?;
    Ok(())
}

/// Applies the pending change the token belongs to; the old address is
/// told, in a mail from `app_name`.
pub async fn confirm(
    db: &Db,
    cache: &SessionCache,
    app_name: &str,
    u: &user::Model,
    token: &str,
) -> Result<String, EmailChangeError> {
    let hash = crypto::sha256_hex(token.as_bytes());
    let change = email_change::Entity::find_by_id(u.id.as_str())
        .one(db.read())
        .await?
        .filter(|c| crypto::constant_time_eq(c.token_hash.as_bytes(), hash.as_bytes()))
        .filter(|c| c.expires_at > Utc::now())
        .ok_or(EmailChangeError::InvalidToken)?;
    let new_email = Email::parse("email", &change.new_email)?;
    if users::email_taken(db.read(), &new_email.key(), Some(&u.id)).await? {
        return Err(EmailChangeError::Taken);
    }
    let txn = db.begin_write().await?;
    users::update(&u.id)
        .col_expr(user::Column::Email, Expr::value(new_email.as_str()))
        .col_expr(user::Column::EmailKey, Expr::value(new_email.key()))
        .col_expr(user::Column::EmailVerified, Expr::value(true))
        .exec(&txn)
        .await?;
    email_change::Entity::delete_many()
        .filter(email_change::Column::UserId.eq(u.id.as_str()))
        .exec(&txn)
        .await?;
    mail::enqueue(
        &txn,
        Mail {
            from_name: Some(app_name.to_owned()),
            to: u.email.clone(),
            subject: "Your email address was changed".to_owned(),
            text: format!(
                "Hello {name},\n\nThe email address of your account was changed from {old} to {new}.\nIf you did not do this, secure your account now.\n",
                name = u.username,
                old = u.email,
                new = new_email.as_str(),
            ),
            ..Mail::default()
        },
    )
    .await?;
    txn.commit().await?;
    cache.user_changed(&u.id).await;
    Ok(new_email.as_str().to_owned())
}
