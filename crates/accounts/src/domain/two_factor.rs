//! Two-factor authentication: enrolment, confirmation, disabling, backup
//! codes, and checking a second factor with a lockout after wrong codes.

use chrono::{DateTime, Utc};
use keel_platform::crypto::SecretBox;
use keel_platform::db::Db;
use keel_platform::failure::Cause;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, Set,
};

use super::users;
use crate::entity::{backup_code, code_failure, user};
use crate::identity::cache::SessionCache;
use keel_platform::totp;

/// Why a two-factor step was refused.
#[derive(Debug, thiserror::Error)]
pub enum TwoFactorError {
    #[error("Two-factor authentication is already on")]
    AlreadyEnabled,
    #[error("Two-factor authentication is not on")]
    NotEnabled,
    #[error("Start two-factor setup first (POST /account/two-factor)")]
    NotPending,
    #[error("Backup codes exist only while two-factor authentication is on")]
    NoBackupCodes,
    #[error("The code is wrong or was already used")]
    InvalidCode,
    #[error("Too many wrong codes; try again later")]
    Locked { retry_after_secs: u64 },
    /// A stored secret that cannot be read, or a QR code not drawn.
    #[error("two-factor secrets: {0}")]
    Secret(#[source] Cause),
    #[error(transparent)]
    Db(#[from] DbErr),
}

fn secret_error(e: impl Into<Cause>) -> TwoFactorError {
    TwoFactorError::Secret(e.into())
}

/// Wrong codes allowed in the window before further attempts get 429.
pub const MAX_FAILURES: usize = 5;
pub const FAILURE_WINDOW_SECS: i64 = 15 * 60;

pub struct Enrollment {
    pub secret_base32: String,
    pub qr_data_uri: String,
}

/// What two-factor's steps work with: the database, the session cache
/// that hears of every change to a user, and the box sealing secrets.
#[derive(Clone, Copy)]
pub struct Keys<'a> {
    pub db: &'a Db,
    pub sessions: &'a SessionCache,
    pub secrets: &'a SecretBox,
}

/// Starts enrolment: a new secret, pending until confirmed with a code;
/// `issuer` names the service in authenticator apps.
pub async fn start(
    k: Keys<'_>,
    issuer: &str,
    u: &user::Model,
) -> Result<Enrollment, TwoFactorError> {
    if u.two_factor {
        return Err(TwoFactorError::AlreadyEnabled);
    }
    let secret = totp::new_secret();
    let b32 = totp::base32(&secret);
    let url = totp::otpauth_url(&secret, issuer, &u.username).map_err(TwoFactorError::Secret)?;
    let qr = totp::qr_data_uri(&url).map_err(TwoFactorError::Secret)?;
    user::Entity::update_many()
        .col_expr(
            user::Column::TotpPending,
            Expr::value(k.secrets.seal(b32.as_bytes())),
        )
        .filter(user::Column::Id.eq(u.id.as_str()))
        .exec(k.db.write())
        .await?;
    k.sessions.user_changed(&u.id).await;
    Ok(Enrollment {
        secret_base32: b32,
        qr_data_uri: qr,
    })
}

fn open_secret(secrets: &SecretBox, sealed: &str) -> Result<Vec<u8>, TwoFactorError> {
    let b32 = secrets.open(sealed).map_err(secret_error)?;
    let b32 = String::from_utf8(b32).map_err(secret_error)?;
    totp::from_base32(&b32).ok_or_else(|| secret_error("a stored TOTP secret is not base32"))
}

fn now_secs() -> u64 {
    u64::try_from(Utc::now().timestamp()).unwrap_or(0)
}

/// Confirms enrolment with a code of the pending secret; generates the
/// backup codes.
pub async fn confirm(k: Keys<'_>, u: &user::Model, code: &str) -> Result<(), TwoFactorError> {
    if u.two_factor {
        return Err(TwoFactorError::AlreadyEnabled);
    }
    let pending = u
        .totp_pending
        .as_deref()
        .ok_or(TwoFactorError::NotPending)?;
    check_lockout(k.db, &u.id).await?;
    let secret = open_secret(k.secrets, pending)?;
    let step = totp::matching_step(&secret, code, now_secs(), u.totp_last_step)
        .map_err(TwoFactorError::Secret)?;
    let Some(step) = step else {
        record_failure(k.db, &u.id).await?;
        return Err(TwoFactorError::InvalidCode);
    };
    let codes: Vec<backup_code::ActiveModel> = totp::new_backup_codes()
        .into_iter()
        .enumerate()
        .map(|(i, code)| backup_code::ActiveModel {
            user_id: Set(u.id.clone()),
            position: Set(i32::try_from(i).unwrap_or(0)),
            sealed_code: Set(k.secrets.seal(code.as_bytes())),
            used_at: Set(None),
        })
        .collect();
    let on = users::update(&u.id)
        .col_expr(user::Column::TwoFactor, Expr::value(true))
        .col_expr(user::Column::TotpSecret, Expr::value(pending))
        .col_expr(user::Column::TotpLastStep, Expr::value(step));
    switch(k, &u.id, on, codes).await
}

/// Writes two-factor's new state: the user's columns (`TotpPending`
/// cleared) and the backup codes replaced by `codes`, in one transaction.
async fn switch(
    k: Keys<'_>,
    user_id: &str,
    change: keel_platform::sea_orm::UpdateMany<user::Entity>,
    codes: Vec<backup_code::ActiveModel>,
) -> Result<(), TwoFactorError> {
    let txn = k.db.begin_write().await?;
    change
        .col_expr(
            user::Column::TotpPending,
            Expr::value(Option::<String>::None),
        )
        .exec(&txn)
        .await?;
    backup_code::Entity::delete_many()
        .filter(backup_code::Column::UserId.eq(user_id))
        .exec(&txn)
        .await?;
    for code in codes {
        code.insert(&txn).await?;
    }
    txn.commit().await?;
    k.sessions.user_changed(user_id).await;
    Ok(())
}

/// Turns two-factor off after checking a TOTP or backup code.
pub async fn disable(k: Keys<'_>, u: &user::Model, code: &str) -> Result<(), TwoFactorError> {
    if !u.two_factor {
        return Err(TwoFactorError::NotEnabled);
    }
    check_second_factor(k, u, code).await?;
    remove(k, u).await
}

/// Turns two-factor off without a code: an operator removing a lost
/// second factor (after checking who asks). Its backup codes go too.
pub async fn remove(k: Keys<'_>, u: &user::Model) -> Result<(), TwoFactorError> {
    if !u.two_factor {
        return Err(TwoFactorError::NotEnabled);
    }
    let off = users::update(&u.id)
        .col_expr(user::Column::TwoFactor, Expr::value(false))
        .col_expr(
            user::Column::TotpSecret,
            Expr::value(Option::<String>::None),
        );
    switch(k, &u.id, off, Vec::new()).await
}

/// The unused backup codes, in order.
pub async fn backup_codes(k: Keys<'_>, u: &user::Model) -> Result<Vec<String>, TwoFactorError> {
    if !u.two_factor {
        return Err(TwoFactorError::NoBackupCodes);
    }
    let codes = unused_codes(k, &u.id).await?;
    Ok(codes.into_iter().map(|(_, code)| code).collect())
}

async fn unused_codes(k: Keys<'_>, user_id: &str) -> Result<Vec<(i32, String)>, TwoFactorError> {
    let rows = backup_code::Entity::find()
        .filter(backup_code::Column::UserId.eq(user_id))
        .filter(backup_code::Column::UsedAt.is_null())
        .order_by_asc(backup_code::Column::Position)
        .all(k.db.read())
        .await?;
    rows.into_iter()
        .map(|r| {
            let plain = k.secrets.open(&r.sealed_code).map_err(secret_error)?;
            Ok((r.position, String::from_utf8(plain).map_err(secret_error)?))
        })
        .collect()
}

/// Accepts a TOTP code (once) or an unused backup code (then spent). Wrong
/// codes count towards the lockout.
pub async fn check_second_factor(
    k: Keys<'_>,
    u: &user::Model,
    code: &str,
) -> Result<(), TwoFactorError> {
    check_lockout(k.db, &u.id).await?;
    let code = code.trim();
    if accept_totp(k, u, code).await? || accept_backup(k, u, code).await? {
        return Ok(());
    }
    record_failure(k.db, &u.id).await?;
    Err(TwoFactorError::InvalidCode)
}

async fn accept_totp(k: Keys<'_>, u: &user::Model, code: &str) -> Result<bool, TwoFactorError> {
    let Some(sealed) = u.totp_secret.as_deref() else {
        return Ok(false);
    };
    let secret = open_secret(k.secrets, sealed)?;
    let step = totp::matching_step(&secret, code, now_secs(), u.totp_last_step)
        .map_err(TwoFactorError::Secret)?;
    let Some(step) = step else {
        return Ok(false);
    };
    // Only one request may use a step, even when two arrive together.
    let res = user::Entity::update_many()
        .col_expr(user::Column::TotpLastStep, Expr::value(step))
        .filter(user::Column::Id.eq(u.id.as_str()))
        .filter(user::Column::TotpLastStep.lt(step))
        .exec(k.db.write())
        .await?;
    k.sessions.user_changed(&u.id).await;
    Ok(res.rows_affected == 1)
}

async fn accept_backup(k: Keys<'_>, u: &user::Model, code: &str) -> Result<bool, TwoFactorError> {
    if code.len() != 8 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(false);
    }
    let mut matched = None;
    for (position, stored) in unused_codes(k, &u.id).await? {
        if keel_platform::crypto::constant_time_eq(stored.as_bytes(), code.as_bytes()) {
            matched = Some(position);
        }
    }
    let Some(position) = matched else {
        return Ok(false);
    };
    let res = backup_code::Entity::update_many()
        .col_expr(backup_code::Column::UsedAt, Expr::value(Utc::now()))
        .filter(backup_code::Column::UserId.eq(u.id.as_str()))
        .filter(backup_code::Column::Position.eq(position))
        .filter(backup_code::Column::UsedAt.is_null())
        .exec(k.db.write())
        .await?;
    Ok(res.rows_affected == 1)
}

fn window_start() -> DateTime<Utc> {
    Utc::now() - chrono::Duration::seconds(FAILURE_WINDOW_SECS)
}

/// 429 while the user has `MAX_FAILURES` wrong codes inside the window;
/// `Retry-After` is when the oldest of them leaves it.
pub async fn check_lockout(db: &Db, user_id: &str) -> Result<(), TwoFactorError> {
    let recent = code_failure::Entity::find()
        .filter(code_failure::Column::UserId.eq(user_id))
        .filter(code_failure::Column::FailedAt.gt(window_start()))
        .order_by_desc(code_failure::Column::FailedAt)
        .all(db.read())
        .await?;
    if recent.len() < MAX_FAILURES {
        return Ok(());
    }
    let oldest_counted = recent
        .get(MAX_FAILURES - 1)
        .map_or_else(Utc::now, |f| f.failed_at);
    let free_at = oldest_counted + chrono::Duration::seconds(FAILURE_WINDOW_SECS);
    let wait = (free_at - Utc::now()).num_seconds().max(1);
    Err(TwoFactorError::Locked {
        retry_after_secs: u64::try_from(wait).unwrap_or(1),
    })
}

pub async fn record_failure(db: &Db, user_id: &str) -> Result<(), DbErr> {
    code_failure::Entity::delete_many()
        .filter(code_failure::Column::UserId.eq(user_id))
        .filter(code_failure::Column::FailedAt.lte(window_start()))
        .exec(db.write())
        .await?;
    code_failure::ActiveModel {
        user_id: Set(user_id.to_owned()),
        failed_at: Set(Utc::now()),
        ..Default::default()
    }
    .insert(db.write())
    .await?;
    Ok(())
}
