//! `POST /api/auth/sign-in`, `POST /api/auth/sign-out`, `GET /api/auth/session`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::SET_COOKIE;
use axum::response::{IntoResponse, Response};
use keel_platform::guard::Door;
use keel_platform::http::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::{Visitor, cleared_cookie, same_origin, session_cookie};
use crate::domain::owner;
use crate::error::{self, Error, ErrorBody};
use crate::input::Body;
use crate::routes::failures::*;
use crate::state::AppState;

/// The owner's sign-in: 20 attempts a minute from one address, 5 for one
/// email, at the platform's guard.
pub const SIGN_IN: Door = Door {
    service: crate::API,
    name: "sign-in",
    routes: &[("POST", "/api/auth/sign-in")],
    per_address: 20,
    per_name: 5,
};

#[derive(Deserialize, ToSchema)]
pub struct SignIn {
    email: String,
    password: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// `null` when not signed in.
    #[schema(value_type = Option<SessionOwner>)]
    owner: Option<SessionOwner>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionOwner {
    email: String,
    #[serde(with = "keel_platform::time::millis")]
    #[schema(value_type = String, format = DateTime)]
    expires_at: chrono::DateTime<chrono::Utc>,
}

/// At most `limit` hits of `subject` under `scope` a minute;
/// TOO_MANY_REQUESTS with `message` beyond. The cache keys the subject by
/// its pseudonym.
pub(crate) async fn limited(
    state: &AppState,
    scope: &str,
    subject: &str,
    limit: u64,
    message: &'static str,
) -> Result<(), Error> {
    match state.platform.cache.per_minute(scope, subject, limit).await {
        None => Ok(()),
        Some(wait) => Err(error::too_many(message, wait.as_secs())),
    }
}

/// Sign in as the owner; sets the session cookie. A wrong email and a
/// wrong password answer the same.
#[utoipa::path(post, path = "/api/auth/sign-in", tag = "auth",
    request_body = SignIn,
    responses(
        (status = 200, description = "Signed in; Set-Cookie: channel_session", body = Session),
        (status = 400, description = "PARSE_ERROR: the body is not JSON with `email` and `password` strings", body = ErrorBody),
        (status = 401, description = "UNAUTHORIZED: wrong email or password", body = ErrorBody),
        CrossSite,
        (status = 429, description = "TOO_MANY_REQUESTS", body = ErrorBody),
    ))]
pub async fn sign_in(
    State(state): State<AppState>,
    visitor: Visitor,
    headers: HeaderMap,
    Body(body): Body<SignIn>,
) -> Result<Response, Error> {
    if !same_origin(&state.cfg, &headers) {
        return Err(error::cross_site());
    }
    let email = body.email.trim().to_lowercase();
    let guard = &state.platform.guard;
    let knock = guard.knock(SIGN_IN, visitor.peer, Some(&email)).await?;
    let db = &state.platform.db;
    if !owner::check(db, &email, &body.password, knock).await? {
        return Err(error::wrong_credentials());
    }
    let ttl = chrono::Duration::from_std(state.cfg.session_ttl).unwrap_or_default();
    let token = owner::open_session(db, ttl).await?;
    let mut resp = Json(Session {
        owner: Some(SessionOwner {
            email,
            expires_at: chrono::Utc::now() + ttl,
        }),
    })
    .into_response();
    if let Some(c) = session_cookie(&state.cfg, &token, ttl.num_seconds()) {
        resp.headers_mut().insert(SET_COOKIE, c);
    }
    Ok(resp)
}

#[derive(Serialize, ToSchema)]
pub struct SignedOut {
    success: bool,
}

/// End this session (server-side too); clears the cookie. Signing out
/// without a live session succeeds too: there is nothing left to end.
#[utoipa::path(post, path = "/api/auth/sign-out", tag = "auth", security((), ("session" = [])),
    responses(
        (status = 200, body = SignedOut),
        CrossSite,
    ))]
pub async fn sign_out(
    State(state): State<AppState>,
    visitor: Visitor,
    headers: HeaderMap,
) -> Result<Response, Error> {
    if !same_origin(&state.cfg, &headers) {
        return Err(error::cross_site());
    }
    if let Some(o) = visitor.owner {
        owner::close_session(&state.platform.db, &o.session).await?;
    }
    let mut resp = Json(SignedOut { success: true }).into_response();
    if let Some(c) = cleared_cookie(&state.cfg) {
        resp.headers_mut().insert(SET_COOKIE, c);
    }
    Ok(resp)
}

/// Who is signed in (`owner` is `null` when nobody is).
#[utoipa::path(get, path = "/api/auth/session", tag = "auth", security((), ("session" = [])),
    responses((status = 200, body = Session)))]
pub async fn session(visitor: Visitor) -> Json<Session> {
    Json(Session {
        owner: visitor.owner.map(|o| SessionOwner {
            email: o.email,
            expires_at: o.expires_at,
        }),
    })
}
