//! POST /admin/login and /admin/logout: the host site's cookie session.

use axum::extract::{ConnectInfo, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use keel_platform::audit::{self, Actor, Entry};
use keel_platform::guard::Door;
use keel_platform::http::{Json, NoStore, client_ip, request_client_ip};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Done;
use crate::auth::{SESSION, cookie, cookie_name_of, session};
use crate::domain::admin;
use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::input::Body;
use crate::state::AppState;
use keel_platform::http::cookies::is_https;

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
    let mut knock = match guard.knock(LOGIN, address, Some(&body.username)).await {
        Ok(knock) => knock,
        Err(throttled) => {
            record_throttled(&state, &body.username, address).await;
            return Err(throttled.into());
        }
    };
    let found = admin::find_user(&state.db, &body.username).await?;
    let hash = found.as_ref().map(|u| u.password_hash.clone());
    let ok = knock.verify(body.password, hash).await?;
    // A disabled user is refused as a wrong password is: nothing to learn.
    let Some(u) = found.clone().filter(|u| ok && u.disabled_at.is_none()) else {
        knock.refused();
        let refused = Entry::new(crate::NAME, "svc_admin_sign_in_refused");
        let who = actor_name(&state, &body.username, found.as_ref());
        audit::record(&state.db, &Actor::at(who, address), refused).await;
        return Err(error::bad_credentials());
    };
    knock.accepted();
    let signed_in = Entry::new(crate::NAME, "svc_admin_signed_in");
    audit::record(&state.db, &Actor::at(&u.username, address), signed_in).await;
    let ttl = chrono::Duration::from_std(state.cfg.session_ttl).map_err(Error::internal)?;
    let (token, nonce) = admin::open_session(&state.db, &u, ttl).await?;
    let https = is_https(
        Some(peer.ip()),
        &headers,
        &state.platform.config.http.trusted_proxies,
    );
    let cookie = SESSION.set(https, &token, ttl.num_seconds());
    let mut resp = NoStore(Json(LoggedIn {
        nonce,
        user: view(&u),
    }))
    .into_response();
    resp.headers_mut().insert(
        SET_COOKIE,
        HeaderValue::from_str(&cookie).map_err(Error::internal)?,
    );
    Ok(resp)
}

/// Who tried, as the audit log names them: the user, or (a name no user
/// has, which may be a password typed in the wrong box) its pseudonym.
fn actor_name(state: &AppState, typed: &str, found: Option<&crate::entity::user::Model>) -> String {
    found.map_or_else(
        || {
            format!(
                "unknown {}",
                state.platform.cache.pseudonym(&typed.trim().to_lowercase())
            )
        },
        |u| u.username.clone(),
    )
}

/// A throttled sign-in, in the audit log at most once a minute per address
/// and name: a flood writes one entry, its count is on `/metrics`.
async fn record_throttled(state: &AppState, typed: &str, address: std::net::IpAddr) {
    let key = format!(
        "svc:throttled:{address}:{}",
        state.platform.cache.pseudonym(&typed.trim().to_lowercase())
    );
    let first = state
        .platform
        .cache
        .claim(&key, std::time::Duration::from_secs(60))
        .await
        .unwrap_or(false);
    if !first {
        return;
    }
    let found = admin::find_user(&state.db, typed).await.ok().flatten();
    let who = actor_name(state, typed, found.as_ref());
    let entry = Entry::new(crate::NAME, "svc_admin_sign_in_throttled");
    audit::record(&state.db, &Actor::at(who, address), entry).await;
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
    let u = session(&parts, &state).await?;
    let name = cookie_name_of(&parts, &state);
    if let Some(token) = cookie(&parts, name) {
        admin::close_session(&state.db, token).await?;
    }
    let address = request_client_ip(&parts, &state.platform.config.http.trusted_proxies);
    let entry = Entry::new(crate::NAME, "svc_admin_signed_out");
    audit::record(&state.db, &Actor::at(&u.username, address), entry).await;
    let mut resp = Json(Done::OK).into_response();
    let https = name == SESSION.https;
    let ended = HeaderValue::from_str(&SESSION.set(https, "", 0)).map_err(Error::internal)?;
    resp.headers_mut().insert(SET_COOKIE, ended);
    Ok(resp)
}
