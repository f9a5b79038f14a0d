//! Two-factor authentication: enrolment, confirmation, disabling, backup
//! codes, and checking a second factor with a lockout after wrong codes.

use chrono::{DateTime, Utc};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};

use super::users;
use crate::auth::totp;
use crate::entity::{backup_code, code_failure, user};
use crate::error::{self, Error};
use crate::state::AppState;

/// Wrong codes allowed in the window before further attempts get 429.
pub const MAX_FAILURES: usize = 5;
pub const FAILURE_WINDOW_SECS: i64 = 15 * 60;

pub struct Enrollment {
    pub secret_base32: String,
    pub qr_data_uri: String,
}

fn already_enabled() -> Error {
    Error::conflict(
        "TWO_FACTOR_ALREADY_ENABLED",
        "Two-factor authentication is already on",
    )
}

fn not_enabled() -> Error {
    Error::conflict(
        "TWO_FACTOR_NOT_ENABLED",
        "Two-factor authentication is not on",
    )
}

pub fn invalid_code() -> Error {
    Error::bad_request("INVALID_CODE", "The code is wrong or was already used")
}

/// Starts enrolment: a new secret, pending until confirmed with a code.
pub async fn start(state: &AppState, u: &user::Model) -> Result<Enrollment, Error> {
    if u.two_factor {
        return Err(already_enabled());
    }
    let secret = totp::new_secret();
    let b32 = totp::base32(&secret);
    let url = totp::otpauth_url(&secret, &state.cfg.totp_issuer, &u.username)?;
    let qr = totp::qr_data_uri(&url)?;
    user::Entity::update_many()
        .col_expr(
            user::Column::TotpPending,
            Expr::value(state.secrets.seal(b32.as_bytes())),
        )
        .filter(user::Column::Id.eq(u.id.as_str()))
        .exec(state.db().write())
        .await?;
    state.user_changed(&u.id).await;
    Ok(Enrollment {
        secret_base32: b32,
        qr_data_uri: qr,
    })
}

fn open_secret(state: &AppState, sealed: &str) -> Result<Vec<u8>, Error> {
    let b32 = state.secrets.open(sealed).map_err(Error::internal)?;
    let b32 = String::from_utf8(b32).map_err(Error::internal)?;
    base32::decode(base32::Alphabet::Rfc4648 { padding: false }, &b32)
        .ok_or_else(|| Error::internal("a stored TOTP secret is not base32"))
}

fn now_secs() -> u64 {
    u64::try_from(Utc::now().timestamp()).unwrap_or(0)
}

/// Confirms enrolment with a code of the pending secret; generates the
/// backup codes.
pub async fn confirm(state: &AppState, u: &user::Model, code: &str) -> Result<(), Error> {
    if u.two_factor {
        return Err(already_enabled());
    }
    let pending = u.totp_pending.as_deref().ok_or_else(|| {
        Error::conflict(
            "TWO_FACTOR_NOT_PENDING",
            "Start two-factor setup first (POST /account/two-factor)",
        )
    })?;
    check_lockout(state, &u.id).await?;
    let secret = open_secret(state, pending)?;
    let Some(step) = totp::matching_step(&secret, code, now_secs(), u.totp_last_step)? else {
        record_failure(state, &u.id).await?;
        return Err(invalid_code());
    };
    let codes: Vec<backup_code::ActiveModel> = totp::new_backup_codes()
        .into_iter()
        .enumerate()
        .map(|(i, code)| backup_code::ActiveModel {
            user_id: Set(u.id.clone()),
            position: Set(i32::try_from(i).unwrap_or(0)),
            sealed_code: Set(state.secrets.seal(code.as_bytes())),
            used_at: Set(None),
        })
        .collect();
    let on = users::update(&u.id)
        .col_expr(user::Column::TwoFactor, Expr::value(true))
        .col_expr(user::Column::TotpSecret, Expr::value(pending))
        .col_expr(user::Column::TotpLastStep, Expr::value(step));
    switch(state, &u.id, on, codes).await
}

/// Writes two-factor's new state: the user's columns (`TotpPending`
/// cleared) and the backup codes replaced by `codes`, in one transaction.
async fn switch(
    state: &AppState,
    user_id: &str,
    change: keel_platform::sea_orm::UpdateMany<user::Entity>,
    codes: Vec<backup_code::ActiveModel>,
) -> Result<(), Error> {
    let txn = state.db().begin_write().await?;
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
    state.user_changed(user_id).await;
    Ok(())
}

/// Turns two-factor off after checking a TOTP or backup code.
pub async fn disable(state: &AppState, u: &user::Model, code: &str) -> Result<(), Error> {
    if !u.two_factor {
        return Err(not_enabled());
    }
    check_second_factor(state, u, code).await?;
    let off = users::update(&u.id)
        .col_expr(user::Column::TwoFactor, Expr::value(false))
        .col_expr(
            user::Column::TotpSecret,
            Expr::value(Option::<String>::None),
        );
    switch(state, &u.id, off, Vec::new()).await
}

/// The unused backup codes, in order.
pub async fn backup_codes(state: &AppState, u: &user::Model) -> Result<Vec<String>, Error> {
    if !u.two_factor {
        return Err(Error::forbidden(
            "TWO_FACTOR_NOT_ENABLED",
            "Backup codes exist only while two-factor authentication is on",
        ));
    }
    let codes = unused_codes(state, &u.id).await?;
    Ok(codes.into_iter().map(|(_, code)| code).collect())
}

async fn unused_codes(state: &AppState, user_id: &str) -> Result<Vec<(i32, String)>, Error> {
    let rows = backup_code::Entity::find()
        .filter(backup_code::Column::UserId.eq(user_id))
        .filter(backup_code::Column::UsedAt.is_null())
        .order_by_asc(backup_code::Column::Position)
        .all(state.db().read())
        .await?;
    rows.into_iter()
        .map(|r| {
            let plain = state
                .secrets
                .open(&r.sealed_code)
                .map_err(Error::internal)?;
            Ok((
                r.position,
                String::from_utf8(plain).map_err(Error::internal)?,
            ))
        })
        .collect()
}

/// Accepts a TOTP code (once) or an unused backup code (then spent). Wrong
/// codes count towards the lockout.
pub async fn check_second_factor(
    state: &AppState,
    u: &user::Model,
    code: &str,
) -> Result<(), Error> {
    check_lockout(state, &u.id).await?;
    let code = code.trim();
    if accept_totp(state, u, code).await? || accept_backup(state, u, code).await? {
        return Ok(());
    }
    record_failure(state, &u.id).await?;
    Err(invalid_code())
}

async fn accept_totp(state: &AppState, u: &user::Model, code: &str) -> Result<bool, Error> {
    let Some(sealed) = u.totp_secret.as_deref() else {
        return Ok(false);
    };
    let secret = open_secret(state, sealed)?;
    let Some(step) = totp::matching_step(&secret, code, now_secs(), u.totp_last_step)? else {
        return Ok(false);
    };
    // Only one request may use a step, even when two arrive together.
    let res = user::Entity::update_many()
        .col_expr(user::Column::TotpLastStep, Expr::value(step))
        .filter(user::Column::Id.eq(u.id.as_str()))
        .filter(user::Column::TotpLastStep.lt(step))
        .exec(state.db().write())
        .await?;
    state.user_changed(&u.id).await;
    Ok(res.rows_affected == 1)
}

async fn accept_backup(state: &AppState, u: &user::Model, code: &str) -> Result<bool, Error> {
    if code.len() != 8 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(false);
    }
    let mut matched = None;
    for (position, stored) in unused_codes(state, &u.id).await? {
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
        .exec(state.db().write())
        .await?;
    Ok(res.rows_affected == 1)
}

fn window_start() -> DateTime<Utc> {
    Utc::now() - chrono::Duration::seconds(FAILURE_WINDOW_SECS)
}

/// 429 while the user has `MAX_FAILURES` wrong codes inside the window;
/// `Retry-After` is when the oldest of them leaves it.
pub async fn check_lockout(state: &AppState, user_id: &str) -> Result<(), Error> {
    let recent = code_failure::Entity::find()
        .filter(code_failure::Column::UserId.eq(user_id))
        .filter(code_failure::Column::FailedAt.gt(window_start()))
        .order_by_desc(code_failure::Column::FailedAt)
        .all(state.db().read())
        .await?;
    if recent.len() < MAX_FAILURES {
        return Ok(());
    }
    let oldest_counted = recent
        .get(MAX_FAILURES - 1)
        .map_or_else(Utc::now, |f| f.failed_at);
    let free_at = oldest_counted + chrono::Duration::seconds(FAILURE_WINDOW_SECS);
    let wait = (free_at - Utc::now()).num_seconds().max(1);
    Err(error::too_many(
        "TOO_MANY_ATTEMPTS",
        "Too many wrong codes; try again later",
        u64::try_from(wait).unwrap_or(1),
    ))
}

pub async fn record_failure(state: &AppState, user_id: &str) -> Result<(), Error> {
    let db = state.db();
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
