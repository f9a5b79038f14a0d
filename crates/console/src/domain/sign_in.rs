//! An operator's sign-in: name, password and the code of the second
//! factor, at the platform's guard (its limits, its metrics, its hashing
//! slots), every outcome in the audit log.

use chrono::Utc;
use keel_platform::Platform;
use keel_platform::audit::{self, Actor, Entry};
use keel_platform::guard::{Door, Throttled};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter};
use keel_platform::totp;

use crate::domain::operators;
use crate::domain::sessions::{self, Lifetimes, Opened};
use crate::entity::operator;

/// 20 attempts a minute from one address, 5 for one name.
pub const DOOR: Door = Door {
    service: crate::NAME,
    name: "login",
    routes: &[("POST", "/console/v1/session")],
    per_address: 20,
    per_name: 5,
};

#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// A wrong name, password or code, or a disabled operator: one answer.
    #[error("the name, password or code is wrong")]
    Refused,
    #[error(transparent)]
    Throttled(#[from] Throttled),
    #[error("reading the second factor failed")]
    Secret,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What the operator typed.
pub struct Typed<'a> {
    pub name: &'a str,
    pub password: String,
    pub code: &'a str,
}

pub async fn sign_in(
    platform: &Platform,
    typed: Typed<'_>,
    address: std::net::IpAddr,
    life: Lifetimes,
) -> Result<(operator::Model, Opened), SignInError> {
    let db = &platform.db;
    let mut knock = platform
        .guard
        .knock(DOOR, address, Some(typed.name))
        .await
        .inspect_err(|_| tracing::debug!("console sign-in throttled"))?;
    let found = operators::find(db, typed.name).await?;
    let hash = found.as_ref().map(|o| o.password_hash.clone());
    let password_ok = knock.verify(typed.password, hash).await?;
    let op = match found.filter(|o| password_ok && o.disabled_at.is_none()) {
        Some(op) if second_factor(platform, &op, typed.code).await? => op,
        found => {
            knock.refused();
            let who = found.map_or_else(
                || {
                    format!(
                        "unknown {}",
                        platform.cache.pseudonym(&typed.name.trim().to_lowercase())
                    )
                },
                |o| format!("operator:{}", o.name),
            );
            let entry = Entry::new(crate::NAME, "operator_sign_in_refused");
            audit::record(db, &Actor::at(who, address), entry).await;
            return Err(SignInError::Refused);
        }
    };
    knock.accepted();
    let opened = sessions::open(db, &op, life, address).await?;
    let entry = Entry::new(crate::NAME, "operator_signed_in");
    audit::record(
        db,
        &Actor::at(format!("operator:{}", op.name), address),
        entry,
    )
    .await;
    Ok((op, opened))
}

/// Whether `code` is the operator's current TOTP code, not used before
/// (the step is claimed in the database: a code works once, even when two
/// sign-ins race with it).
async fn second_factor(
    platform: &Platform,
    op: &operator::Model,
    code: &str,
) -> Result<bool, SignInError> {
    let secret = platform
        .secrets
        .open(&op.totp_secret)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|b32| totp::from_base32(&b32))
        .ok_or(SignInError::Secret)?;
    let now = u64::try_from(Utc::now().timestamp()).unwrap_or(0);
    let Some(step) = totp::matching_step(&secret, code, now, op.totp_last_step)
        .map_err(|_| SignInError::Secret)?
    else {
        return Ok(false);
    };
    let claimed = operator::Entity::update_many()
        .col_expr(operator::Column::TotpLastStep, Expr::value(step))
        .filter(operator::Column::Id.eq(op.id))
        .filter(operator::Column::TotpLastStep.lt(step))
        .exec(platform.db.write())
        .await?;
    Ok(claimed.rows_affected == 1)
}
