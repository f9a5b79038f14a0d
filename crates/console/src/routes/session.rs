//! Signing in and out, and who is signed in.

use axum::Json;
use axum::extract::{ConnectInfo, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use keel_platform::audit::Entry;
use keel_platform::console::input::Body;
use keel_platform::console::{Error, ErrorBody, Operator, Role};
use keel_platform::http::NoStore;
use keel_platform::http::cookies::is_https;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::SESSION;
use crate::domain::sessions;
use crate::domain::sign_in::{self, Typed};
use crate::state::{AppState, AreaView};

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignIn {
    /// The operator's name.
    #[schema(min_length = 1, max_length = 60)]
    pub name: String,
    #[schema(min_length = 1, max_length = 1000)]
    pub password: String,
    /// The 6-digit code of the authenticator app.
    #[schema(pattern = r"^[0-9]{6}$")]
    pub code: String,
}

/// The signed-in operator and what the console shows them.
#[derive(Serialize, ToSchema)]
pub struct Me {
    pub name: String,
    pub roles: Vec<Role>,
    /// The areas the services of this process added, each with its role.
    pub areas: Vec<AreaView>,
}

#[derive(Serialize, ToSchema)]
pub struct SignedIn {
    pub operator: Me,
    /// Send it back as `X-Console-Csrf` with every request that changes
    /// something; it is shown once.
    pub csrf: String,
    /// When the session ends unless used (it moves on with use).
    pub expires_at: DateTime<Utc>,
}

fn me(state: &AppState, name: &str, roles: &keel_platform::console::Roles) -> Me {
    Me {
        name: name.to_owned(),
        roles: roles.iter().collect(),
        areas: state.areas.clone(),
    }
}

/// Sign in with the name, the password and the current code of the
/// authenticator app: sets the session cookie (HttpOnly, SameSite=Strict)
/// and answers the session's CSRF token. 20 attempts a minute from an
/// address, 5 for a name.
#[utoipa::path(post, path = "/console/v1/session", tag = "session",
    request_body = SignIn,
    responses(
        (status = 200, body = SignedIn),
        (status = 400, description = "invalid_input: a field is missing, of the wrong type, or unknown", body = ErrorBody),
        (status = 401, description = "bad_credentials: the name, password or code is wrong (or the operator is disabled)", body = ErrorBody),
        (status = 429, description = "throttled: too many attempts from this address or for this name; Retry-After", body = ErrorBody),
    ))]
pub async fn sign_in(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Body(body): Body<SignIn>,
) -> Result<Response, Error> {
    let trusted = &state.platform.config.http.trusted_proxies;
    let address = keel_platform::http::client_ip(peer.ip(), &headers, trusted);
    let typed = Typed {
        name: &body.name,
        password: body.password,
        code: &body.code,
    };
    let (op, opened) =
        sign_in::sign_in(&state.platform, typed, address, state.cfg.sessions).await?;
    let https = is_https(Some(peer.ip()), &headers, trusted);
    let max_age = state.cfg.sessions.longest.num_seconds();
    let roles = keel_platform::console::Roles::from_stored(&op.roles);
    let mut resp = NoStore(Json(SignedIn {
        operator: me(&state, &op.name, &roles),
        csrf: opened.csrf,
        expires_at: opened.expires_at,
    }))
    .into_response();
    let cookie = HeaderValue::from_str(&SESSION.set(https, &opened.token, max_age))
        .map_err(Error::internal)?;
    resp.headers_mut().insert(SET_COOKIE, cookie);
    Ok(resp)
}

/// The signed-in operator, their roles and the console's areas.
#[utoipa::path(get, path = "/console/v1/session", tag = "session",
    security(("console_session" = [])),
    responses(
        (status = 200, body = Me),
        (status = 401, description = "not_signed_in", body = ErrorBody),
    ))]
pub async fn whoami(State(state): State<AppState>, op: Operator) -> NoStore<Json<Me>> {
    NoStore(Json(me(&state, &op.name, &op.roles)))
}

/// Sign out: the session ends here and the cookie is cleared.
#[utoipa::path(delete, path = "/console/v1/session", tag = "session",
    security(("console_session" = [], "console_csrf" = [])),
    responses(
        (status = 204, description = "Signed out"),
        (status = 401, description = "not_signed_in", body = ErrorBody),
        (status = 403, description = "csrf_token_invalid", body = ErrorBody),
    ))]
pub async fn sign_out(
    State(state): State<AppState>,
    op: Operator,
    headers: HeaderMap,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
) -> Result<Response, Error> {
    let trusted = &state.platform.config.http.trusted_proxies;
    let https = is_https(Some(peer.ip()), &headers, trusted);
    if let Some(token) = keel_platform::http::cookies::cookie(&headers, SESSION.name(https)) {
        sessions::close(&state.platform.db, token).await?;
    }
    op.record(
        &state.platform.db,
        Entry::new(crate::NAME, "operator_signed_out"),
    )
    .await;
    let mut resp = axum::http::StatusCode::NO_CONTENT.into_response();
    let ended = HeaderValue::from_str(&SESSION.set(https, "", 0)).map_err(Error::internal)?;
    resp.headers_mut().insert(SET_COOKIE, ended);
    Ok(resp)
}
