//! Request authentication as extractors: `Authed` (a live session's user)
//! and `Client` (address and User-Agent of the caller).

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::StatusCode;
use axum::http::header::{AUTHORIZATION, USER_AGENT};
use axum::http::request::Parts;
use chrono::Utc;
use keel_platform::sea_orm::sea_query::{Expr, Query};
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::auth::tokens::TokenError;
use crate::entity::{session, user};
use crate::error::Error;
use crate::state::AppState;

/// The user of a live session. One indexed read, no write.
pub struct Authed {
    pub user: user::Model,
    pub session_id: String,
}

pub fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

impl FromRequestParts<AppState> for Authed {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let token = bearer(parts)
            .ok_or_else(|| Error::unauthorized("A bearer access token is required"))?;
        let claims = state.tokens.verify(token).map_err(|e| match e {
            TokenError::Expired => Error::unauthorized("The access token has expired"),
            TokenError::Invalid => Error::unauthorized("The access token is invalid"),
        })?;
        let live_session = Query::select()
            .expr(Expr::val(1))
            .from(session::Entity)
            .and_where(session::Column::Id.eq(claims.sid.as_str()))
            .and_where(session::Column::UserId.eq(claims.sub.as_str()))
            .and_where(session::Column::RevokedAt.is_null())
            .and_where(session::Column::ExpireAt.gt(Utc::now()))
            .to_owned();
        let user = user::Entity::find_by_id(claims.sub.as_str())
            .filter(Expr::exists(live_session))
            .one(state.db().read())
            .await?
            .ok_or_else(|| Error::unauthorized("The session has ended"))?;
        if user.is_banned {
            return Err(banned());
        }
        Ok(Self {
            user,
            session_id: claims.sid,
        })
    }
}

pub fn banned() -> Error {
    Error::api(
        StatusCode::FORBIDDEN,
        "ACCOUNT_BANNED",
        "This account is banned",
    )
}

/// The caller's address (through trusted proxies) and User-Agent.
pub struct Client {
    pub ip: IpAddr,
    pub user_agent: Option<String>,
}

impl FromRequestParts<AppState> for Client {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::from([127, 0, 0, 1]), |c| c.0.ip());
        let ip = keel_platform::http::client_ip(
            peer,
            &parts.headers,
            &state.platform.config.http.trusted_proxies,
        );
        let user_agent = parts
            .headers
            .get(USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(|s| s.chars().take(512).collect());
        Ok(Self { ip, user_agent })
    }
}
