//! POST /admin/login and /admin/logout: the host site's cookie session.

use axum::extract::{ConnectInfo, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use keel_platform::guard::Door;
use keel_platform::http::{Json, client_ip};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Done;
use crate::auth::{COOKIE_NAME, cookie, session};
use crate::domain::admin;
use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::input::Body;
use crate::state::AppState;

#[derive(Deserialize, ToSchema)]
pub struct LoginBody {
    username: String,
    password: String,
}

#[derive(Serialize, ToSchema)]
pub struct LoggedIn {
    /// Send it as `X-Svc-Nonce` with every state-changing request.
    nonce: String,
    user: UserView,
}

#[derive(Serialize, ToSchema)]
pub struct UserView {
    id: i64,
    username: String,
    capabilities: Vec<String>,
}

/// The admin login: 20 attempts a minute from one address, 5 for one
/// username, at the platform's guard.
pub const LOGIN: Door = Door {
    service: crate::NAME,
    name: "admin-login",
    routes: &[("POST", "/admin/login")],
    per_address: 20,
    per_name: 5,
};

/// Cookie login: sets an HttpOnly, SameSite=Strict session cookie and
/// returns the nonce.
#[utoipa::path(post, path = "/admin/login", tag = "admin",
    request_body = LoginBody,
    responses(
        (status = 200, body = LoggedIn),
        (status = 400, description = format!("{REST_INVALID_JSON}: a field is missing or not a string"), body = ErrorBody),
        (status = 401, description = REST_INVALID_CREDENTIALS, body = ErrorBody),
        (status = 429, description = format!("{RATE_LIMITED}: too many sign-in attempts from this address, or for this username, this minute; Retry-After"), body = ErrorBody),
    ))]
pub async fn login(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Body(body): Body<LoginBody>,
) -> Result<Response, Error> {
    let address = client_ip(
        peer.ip(),
        &headers,
        &state.platform.config.http.trusted_proxies,
    );
    let guard = &state.platform.guard;
    let mut knock = guard.knock(LOGIN, address, Some(&body.username)).await?;
    let found = admin::find_user(&state.db, &body.username).await?;
    let hash = found.as_ref().map(|u| u.password_hash.clone());
    let ok = knock.verify(body.password, hash).await?;
    let Some(u) = found.filter(|_| ok) else {
        knock.refused();
        return Err(error::bad_credentials());
    };
    knock.accepted();
    let ttl = chrono::Duration::from_std(state.cfg.session_ttl).map_err(Error::internal)?;
    let (token, nonce) = admin::open_session(&state.db, &u, ttl).await?;
    let secure = is_https(&state, peer, &headers);
    let cookie = format!(
        "{COOKIE_NAME}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        ttl.num_seconds(),
        if secure { "; Secure" } else { "" }
    );
    let mut resp = Json(LoggedIn {
        nonce,
        user: view(&u),
    })
    .into_response();
    resp.headers_mut().insert(
        SET_COOKIE,
        HeaderValue::from_str(&cookie).map_err(Error::internal)?,
    );
    Ok(resp)
}

/// Secure cookies when the request came over HTTPS (directly, or as a
/// trusted proxy says with `X-Forwarded-Proto`).
fn is_https(state: &AppState, peer: std::net::SocketAddr, headers: &HeaderMap) -> bool {
    state
        .platform
        .config
        .http
        .trusted_proxies
        .contains(&peer.ip())
        && headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

fn view(u: &crate::entity::user::Model) -> UserView {
    UserView {
        id: u.id,
        username: u.username.clone(),
        capabilities: u
            .capabilities
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
    }
}

/// End the cookie session (needs the nonce; an application password is
/// no session, and is refused here).
#[utoipa::path(post, path = "/admin/logout", tag = "admin", security(("session_cookie" = [], "nonce" = [])),
    responses(
        (status = 200, body = Done),
        (status = 401, body = ErrorBody),
        (status = 403, description = REST_COOKIE_INVALID_NONCE, body = ErrorBody),
    ))]
pub async fn logout(
    State(state): State<AppState>,
    req: axum::extract::Request,
) -> Result<Response, Error> {
    let (parts, _) = req.into_parts();
    session(&parts, &state).await?;
    if let Some(token) = cookie(&parts, COOKIE_NAME) {
        admin::close_session(&state.db, token).await?;
    }
    let mut resp = Json(Done::OK).into_response();
    resp.headers_mut().insert(
        SET_COOKIE,
        HeaderValue::from_static("svc_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    Ok(resp)
}
