//! Sessions: one per login, with rotating refresh tokens. Presenting a
//! spent refresh token again revokes its session.

use std::net::IpAddr;
use std::time::Duration;

use chrono::Utc;
use keel_platform::db::Db;
use keel_platform::failure::Cause;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};

use super::users::{self, UserError};
use crate::entity::{refresh_token, session, user};
use crate::id::{SessionId, UserId};
use crate::identity::cache::SessionCache;
use crate::identity::geo::GeoDb;
use crate::identity::tokens::TokenKeys;
use crate::identity::{device, tokens};

/// Why a session could not be opened or refreshed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("The refresh token is invalid or has expired")]
    InvalidRefresh,
    #[error("This refresh token was already used; the session has been revoked")]
    RefreshReused,
    #[error("This account is banned")]
    Banned,
    #[error(transparent)]
    User(#[from] UserError),
    #[error("cannot issue the session's tokens")]
    Issue(#[source] Cause),
    #[error(transparent)]
    Db(#[from] DbErr),
}

pub struct TokenPair {
    pub access_token: String,
    pub refresh_token: String,
}

/// Who opens a session: the caller's address (through trusted proxies)
/// and User-Agent.
pub struct Client {
    pub ip: IpAddr,
    pub user_agent: Option<String>,
}

/// What opens sessions and issues their tokens.
pub struct Issuer<'a> {
    pub tokens: &'a TokenKeys,
    pub geo: &'a GeoDb,
    /// How long a session lives without a refresh.
    pub refresh_ttl: Duration,
}

/// Opens a session for `user_id` and issues its first token pair.
pub async fn open<C: ConnectionTrait>(
    conn: &C,
    issuer: &Issuer<'_>,
    user_id: &str,
    client: &Client,
) -> Result<TokenPair, SessionError> {
    let now = Utc::now();
    let d = device::parse(client.user_agent.as_deref());
    let ttl = chrono::Duration::from_std(issuer.refresh_ttl)
        .map_err(|e| SessionError::Issue(e.into()))?;
    let expire_at = now + ttl;
    let s = session::ActiveModel {
        id: Set(SessionId::generate().into_string()),
        user_id: Set(user_id.to_owned()),
        browser: Set(truncate(d.browser)),
        version: Set(truncate(d.version)),
        platform: Set(truncate(d.platform)),
        os: Set(truncate(d.os)),
        is_dev: Set(d.is_dev),
        location: Set(issuer.geo.locate(client.ip)),
        expire_at: Set(expire_at),
        created_at: Set(now),
        revoked_at: Set(None),
    }
    .insert(conn)
    .await?;
    let refresh = new_refresh(conn, &s.id).await?;
    Ok(TokenPair {
        access_token: issuer
            .tokens
            .issue(user_id, &s.id)
            .map_err(|e| SessionError::Issue(e.into()))?,
        refresh_token: refresh,
    })
}

fn truncate(s: String) -> String {
    s.chars().take(100).collect()
}

async fn new_refresh<C: ConnectionTrait>(conn: &C, session_id: &str) -> Result<String, DbErr> {
    let (token, hash) = tokens::new_refresh_token();
    refresh_token::ActiveModel {
        hash: Set(hash),
        session_id: Set(session_id.to_owned()),
        spent_at: Set(None),
        created_at: Set(Utc::now()),
    }
    .insert(conn)
    .await?;
    Ok(token)
}

/// Exchanges a refresh token for a new pair (the old one is spent).
pub async fn refresh(
    db: &Db,
    cache: &SessionCache,
    issuer: &Issuer<'_>,
    token: &str,
) -> Result<(user::Model, TokenPair), SessionError> {
    let hash = keel_platform::crypto::sha256_hex(token.as_bytes());
    let found = refresh_token::Entity::find_by_id(hash.as_str())
        .one(db.read())
        .await?
        .ok_or(SessionError::InvalidRefresh)?;
    let now = Utc::now();
    if found.spent_at.is_some() {
        revoke_any(db.write(), &found.session_id).await?;
        cache.session_revoked(db, &found.session_id, None).await;
        tracing::warn!(session = %found.session_id, "a spent refresh token was presented again; session revoked");
        return Err(SessionError::RefreshReused);
    }
    let s = session::Entity::find_by_id(found.session_id.as_str())
        .one(db.read())
        .await?
        .filter(|s| is_live(s, now))
        .ok_or(SessionError::InvalidRefresh)?;
    let u = users::find(db.read(), &UserId::stored(s.user_id.as_str())).await?;
    if u.banned_now() {
        return Err(SessionError::Banned);
    }
    let txn = db.begin_write().await?;
    let spent = refresh_token::Entity::update_many()
        .col_expr(refresh_token::Column::SpentAt, Expr::value(now))
        .filter(refresh_token::Column::Hash.eq(hash.as_str()))
        .filter(refresh_token::Column::SpentAt.is_null())
        .exec(&txn)
        .await?;
    if spent.rows_affected == 0 {
        // Spent concurrently: the same token was used twice.
        drop(txn);
        revoke_any(db.write(), &s.id).await?;
        cache.session_revoked(db, &s.id, Some(&s.user_id)).await;
        return Err(SessionError::RefreshReused);
    }
    let refresh = new_refresh(&txn, &s.id).await?;
    txn.commit().await?;
    let access_token = issuer
        .tokens
        .issue(&u.id, &s.id)
        .map_err(|e| SessionError::Issue(e.into()))?;
    Ok((
        u,
        TokenPair {
            access_token,
            refresh_token: refresh,
        },
    ))
}

async fn revoke_any<C: ConnectionTrait>(conn: &C, session_id: &str) -> Result<(), DbErr> {
    session::Entity::update_many()
        .col_expr(session::Column::RevokedAt, Expr::value(Utc::now()))
        .filter(session::Column::Id.eq(session_id))
        .filter(session::Column::RevokedAt.is_null())
        .exec(conn)
        .await?;
    Ok(())
}

/// Revokes one live session of `user_id`; false if there is none. Every
/// node stops accepting it before this returns.
pub async fn revoke(
    db: &Db,
    cache: &SessionCache,
    user_id: &str,
    session_id: &SessionId,
) -> Result<bool, DbErr> {
    let res = session::Entity::update_many()
        .col_expr(session::Column::RevokedAt, Expr::value(Utc::now()))
        .filter(session::Column::Id.eq(session_id.as_str()))
        .filter(session::Column::UserId.eq(user_id))
        .filter(session::Column::RevokedAt.is_null())
        .filter(session::Column::ExpireAt.gt(Utc::now()))
        .exec(db.write())
        .await?;
    let revoked = res.rows_affected > 0;
    if revoked {
        cache
            .session_revoked(db, session_id.as_str(), Some(user_id))
            .await;
    }
    Ok(revoked)
}

/// Revokes every live session of `user_id`, but `except`.
pub async fn revoke_all<C: ConnectionTrait>(
    conn: &C,
    user_id: &str,
    except: Option<&str>,
) -> Result<u64, DbErr> {
    let mut q = session::Entity::update_many()
        .col_expr(session::Column::RevokedAt, Expr::value(Utc::now()))
        .filter(session::Column::UserId.eq(user_id))
        .filter(session::Column::RevokedAt.is_null());
    if let Some(keep) = except {
        q = q.filter(session::Column::Id.ne(keep));
    }
    Ok(q.exec(conn).await?.rows_affected)
}

/// A session is live while it is neither revoked nor past its end: the
/// rule, as a query's condition.
pub fn live_now() -> keel_platform::sea_orm::Condition {
    keel_platform::sea_orm::Condition::all()
        .add(session::Column::RevokedAt.is_null())
        .add(session::Column::ExpireAt.gt(Utc::now()))
}

/// The same rule, of a session read already.
pub fn is_live(s: &session::Model, now: chrono::DateTime<Utc>) -> bool {
    s.revoked_at.is_none() && s.expire_at > now
}

/// The live session `session_id` of `user_id` with its user: a short
/// read (on PostgreSQL outside the pool: no acquire, no test of the
/// connection given back), as every authenticated request makes.
pub async fn live_with_user(
    db: &Db,
    session_id: &str,
    user_id: &str,
) -> Result<Option<(session::Model, user::Model)>, DbErr> {
    let found = db
        .one_short_pair(
            session::Entity::find_by_id(session_id)
                .filter(session::Column::UserId.eq(user_id))
                .filter(live_now())
                .find_also_related(user::Entity),
        )
        .await?;
    Ok(found.and_then(|(s, u)| Some((s, u?))))
}

/// Live sessions, newest first.
pub async fn live<C: ConnectionTrait>(
    conn: &C,
    user_id: &str,
) -> Result<Vec<session::Model>, DbErr> {
    session::Entity::find()
        .filter(session::Column::UserId.eq(user_id))
        .filter(live_now())
        .order_by_desc(session::Column::CreatedAt)
        .order_by_desc(session::Column::Id)
        .all(conn)
        .await
}
