//! Sessions: one per login, with rotating refresh tokens. Presenting a
//! spent refresh token again revokes its session.

use chrono::Utc;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};

use crate::auth::extract::{Client, banned};
use crate::auth::{device, tokens};
use crate::entity::{refresh_token, session, user};
use crate::error::{self, Error};
use crate::id::new_id;
use crate::state::AppState;

pub struct TokenPair {
    pub access_token: String,
    pub refresh_token: String,
}

/// Opens a session for `user_id` and issues its first token pair.
pub async fn open<C: ConnectionTrait>(
    conn: &C,
    state: &AppState,
    user_id: &str,
    client: &Client,
) -> Result<TokenPair, Error> {
    let now = Utc::now();
    let d = device::parse(client.user_agent.as_deref());
    let expire_at =
        now + chrono::Duration::from_std(state.cfg.refresh_ttl).map_err(Error::internal)?;
    let s = session::ActiveModel {
        id: Set(new_id()),
        user_id: Set(user_id.to_owned()),
        browser: Set(truncate(d.browser)),
        version: Set(truncate(d.version)),
        platform: Set(truncate(d.platform)),
        os: Set(truncate(d.os)),
        is_dev: Set(d.is_dev),
        location: Set(state.geo.locate(client.ip)),
        expire_at: Set(expire_at),
        created_at: Set(now),
        revoked_at: Set(None),
    }
    .insert(conn)
    .await?;
    let refresh = new_refresh(conn, &s.id).await?;
    Ok(TokenPair {
        access_token: state
            .tokens
            .issue(user_id, &s.id)
            .map_err(Error::internal)?,
        refresh_token: refresh,
    })
}

fn truncate(s: String) -> String {
    s.chars().take(100).collect()
}

async fn new_refresh<C: ConnectionTrait>(conn: &C, session_id: &str) -> Result<String, Error> {
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

fn invalid_refresh() -> Error {
    error::unauthorized("The refresh token is invalid or has expired")
}

/// Exchanges a refresh token for a new pair (the old one is spent).
pub async fn refresh(state: &AppState, token: &str) -> Result<(user::Model, TokenPair), Error> {
    let hash = keel_platform::crypto::sha256_hex(token.as_bytes());
    let db = state.db();
    let found = refresh_token::Entity::find_by_id(hash.as_str())
        .one(db.read())
        .await?
        .ok_or_else(invalid_refresh)?;
    let now = Utc::now();
    if found.spent_at.is_some() {
        revoke_any(db.write(), &found.session_id).await?;
        state.session_revoked(&found.session_id, None).await;
        tracing::warn!(session = %found.session_id, "a spent refresh token was presented again; session revoked");
        return Err(error::unauthorized(
            "This refresh token was already used; the session has been revoked",
        ));
    }
    let s = session::Entity::find_by_id(found.session_id.as_str())
        .one(db.read())
        .await?
        .filter(|s| s.revoked_at.is_none() && s.expire_at > now)
        .ok_or_else(invalid_refresh)?;
    let u = super::users::find(db.read(), &s.user_id).await?;
    if u.is_banned {
        return Err(banned());
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
        state.session_revoked(&s.id, Some(&s.user_id)).await;
        return Err(error::unauthorized(
            "This refresh token was already used; the session has been revoked",
        ));
    }
    let refresh = new_refresh(&txn, &s.id).await?;
    txn.commit().await?;
    let access_token = state.tokens.issue(&u.id, &s.id).map_err(Error::internal)?;
    Ok((
        u,
        TokenPair {
            access_token,
            refresh_token: refresh,
        },
    ))
}

async fn revoke_any<C: ConnectionTrait>(conn: &C, session_id: &str) -> Result<(), Error> {
    session::Entity::update_many()
        .col_expr(session::Column::RevokedAt, Expr::value(Utc::now()))
        .filter(session::Column::Id.eq(session_id))
        .filter(session::Column::RevokedAt.is_null())
        .exec(conn)
        .await?;
    Ok(())
}

/// Revokes one live session of `user_id`; false if there is none.
pub async fn revoke<C: ConnectionTrait>(
    conn: &C,
    user_id: &str,
    session_id: &str,
) -> Result<bool, Error> {
    let res = session::Entity::update_many()
        .col_expr(session::Column::RevokedAt, Expr::value(Utc::now()))
        .filter(session::Column::Id.eq(session_id))
        .filter(session::Column::UserId.eq(user_id))
        .filter(session::Column::RevokedAt.is_null())
        .filter(session::Column::ExpireAt.gt(Utc::now()))
        .exec(conn)
        .await?;
    Ok(res.rows_affected > 0)
}

/// Revokes every live session of `user_id`, but `except`.
pub async fn revoke_all<C: ConnectionTrait>(
    conn: &C,
    user_id: &str,
    except: Option<&str>,
) -> Result<u64, Error> {
    let mut q = session::Entity::update_many()
        .col_expr(session::Column::RevokedAt, Expr::value(Utc::now()))
        .filter(session::Column::UserId.eq(user_id))
        .filter(session::Column::RevokedAt.is_null());
    if let Some(keep) = except {
        q = q.filter(session::Column::Id.ne(keep));
    }
    Ok(q.exec(conn).await?.rows_affected)
}

/// Live sessions, newest first.
pub async fn live<C: ConnectionTrait>(
    conn: &C,
    user_id: &str,
) -> Result<Vec<session::Model>, Error> {
    Ok(session::Entity::find()
        .filter(session::Column::UserId.eq(user_id))
        .filter(session::Column::RevokedAt.is_null())
        .filter(session::Column::ExpireAt.gt(Utc::now()))
        .order_by_desc(session::Column::CreatedAt)
        .order_by_desc(session::Column::Id)
        .all(conn)
        .await?)
}
