//! Operator sessions: a random cookie and a random CSRF token, both kept
//! as SHA-256 only. A session lives `idle` past its last use, and never
//! longer than `longest` from sign-in; it ends on sign-out, when the
//! operator is disabled, removed or given a new password, and when
//! another operator with the `operators` role ends it.

use chrono::{DateTime, Duration, Utc};
use keel_platform::crypto::{random_token, sha256_hex};
use keel_platform::db::Db;
use keel_platform::sea_orm::{ActiveModelTrait, DbErr, EntityTrait, IntoActiveModel, Set};

use crate::entity::{operator, session};

/// How long sessions live.
#[derive(Debug, Clone, Copy)]
pub struct Lifetimes {
    pub idle: Duration,
    pub longest: Duration,
}

/// A new session's secrets, given to the browser once.
pub struct Opened {
    pub token: String,
    pub csrf: String,
    pub expires_at: DateTime<Utc>,
}

pub async fn open(
    db: &Db,
    op: &operator::Model,
    life: Lifetimes,
    address: std::net::IpAddr,
) -> Result<Opened, DbErr> {
    let (token, csrf) = (random_token(32), random_token(24));
    let now = Utc::now();
    let expires_at = now + life.idle.min(life.longest);
    session::ActiveModel {
        token_hash: Set(sha256_hex(token.as_bytes())),
        operator_id: Set(op.id),
        csrf_hash: Set(sha256_hex(csrf.as_bytes())),
        created_at: Set(now),
        expires_at: Set(expires_at),
        address: Set(Some(address.to_string())),
    }
    .insert(db.write())
    .await?;
    Ok(Opened {
        token,
        csrf,
        expires_at,
    })
}

/// The live session of a cookie and its operator (not disabled). Its
/// expiry moves on with use, at most once a minute, up to `longest`.
pub async fn find(
    db: &Db,
    token: &str,
    life: Lifetimes,
) -> Result<Option<(session::Model, operator::Model)>, DbErr> {
    let now = Utc::now();
    // The session and its operator in one read: this runs on every request.
    let found = session::Entity::find_by_id(sha256_hex(token.as_bytes()))
        .find_also_related(operator::Entity)
        .one(db.read())
        .await?;
    let Some((s, Some(op))) = found else {
        return Ok(None);
    };
    if s.expires_at <= now || op.disabled_at.is_some() {
        return Ok(None);
    }
    let next = (now + life.idle).min(s.created_at + life.longest);
    if next - s.expires_at > Duration::minutes(1) {
        let mut active = s.clone().into_active_model();
        active.expires_at = Set(next);
        active.update(db.write()).await?;
    }
    Ok(Some((s, op)))
}

/// Whether `csrf` is the session's token.
pub fn csrf_matches(s: &session::Model, csrf: &str) -> bool {
    keel_platform::crypto::constant_time_eq(
        sha256_hex(csrf.as_bytes()).as_bytes(),
        s.csrf_hash.as_bytes(),
    )
}

pub async fn close(db: &Db, token: &str) -> Result<(), DbErr> {
    session::Entity::delete_by_id(sha256_hex(token.as_bytes()))
        .exec(db.write())
        .await?;
    Ok(())
}
