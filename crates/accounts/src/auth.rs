//! Who is calling, as extractors: `Authed` (a live session's user) and
//! `Client` (address and User-Agent of the caller).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header::{AUTHORIZATION, USER_AGENT};
use axum::http::request::Parts;
use keel_platform::observe::{Phase, timed};

use crate::domain::sessions::{self, Client};
use crate::entity::user;
use crate::error::{self, Error};
use crate::id::{SessionId, UserId};
use crate::identity::cache::SharedEpoch;
use crate::identity::tokens::TokenError;
use crate::state::AppState;

/// The user of a live session: at most one indexed read, never a write.
pub struct Authed {
    pub user: Arc<user::Model>,
    pub session_id: SessionId,
}

impl Authed {
    pub fn user_id(&self) -> UserId {
        UserId::stored(self.user.id.as_str())
    }
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
        timed(Phase::Auth, Self::authenticate(parts, state)).await
    }
}

impl Authed {
    async fn authenticate(parts: &Parts, state: &AppState) -> Result<Self, Error> {
        let token = bearer(parts).ok_or_else(error::no_token)?;
        let claims = state.tokens.verify(token).map_err(|e| match e {
            TokenError::Expired => error::token_expired(),
            TokenError::Invalid => error::token_invalid(),
        })?;
        let cached = match state.sessions.get(&claims.sid, &claims.sub) {
            Some((user, None)) => Some(user),
            // Shared: only while no node changed the user since.
            Some((user, Some(then))) => (state.sessions.shared_epoch(&claims.sub).await
                == SharedEpoch::Now(then))
            .then_some(user),
            None => None,
        };
        let user = match cached {
            Some(user) => user,
            None => load(state, &claims.sid, &claims.sub).await?,
        };
        if user.banned_now() {
            return Err(error::banned());
        }
        Ok(Self {
            user,
            session_id: SessionId::stored(claims.sid),
        })
    }
}

/// The session (live, of this user) and its user, in one query.
async fn load(
    state: &AppState,
    session_id: &str,
    user_id: &str,
) -> Result<Arc<user::Model>, Error> {
    let epoch = state.sessions.epoch();
    // Read before the database, so a change committed meanwhile is caught.
    let shared = if state.sessions.enabled() {
        state.sessions.shared_epoch(user_id).await.known()
    } else {
        None
    };
    let found = sessions::live_with_user(state.db(), session_id, user_id).await?;
    let Some((s, u)) = found else {
        return Err(error::session_ended());
    };
    let u = Arc::new(u);
    state
        .sessions
        .insert(session_id, u.clone(), s.expire_at, epoch, shared);
    Ok(u)
}

/// The caller's address (through trusted proxies) and User-Agent.
impl FromRequestParts<AppState> for Client {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let ip = keel_platform::http::request_client_ip(
            parts,
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
