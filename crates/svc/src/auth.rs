//! Admin authentication, as the host site does it: an application password
//! over HTTP Basic, or the session cookie plus its nonce (`X-Svc-Nonce`, or
//! `_wpnonce` in the query string) on every request. Then the capability
//! `svc_manage`. In the operator console (svc's areas, `console_area`),
//! the console has signed the operator in already: its role stands for
//! the capability.

use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use keel_platform::console::{Operator, Role};
use keel_platform::crypto::constant_time_eq;
use keel_platform::guard::Door;
use keel_platform::http::cookies::SessionCookie;
use keel_platform::http::request_client_ip;
use keel_platform::observe::{Phase, timed};

use crate::domain::admin::{self, CAPABILITY, has_capability};
use crate::domain::push::idempotency::Sender;
use crate::entity::user;
use crate::error::{self, Error};
use crate::state::AppState;

/// The admins' session cookie (`__Host-svc_session` over HTTPS), as the
/// platform sets every session cookie.
pub const SESSION: SessionCookie = SessionCookie {
    plain: "svc_session",
    https: "__Host-svc_session",
};

/// The session cookie's name for the request of `parts`.
pub fn cookie_name_of(parts: &Parts, state: &AppState) -> &'static str {
    SESSION.name_of(parts, &state.platform.config.http.trusted_proxies)
}

pub const NONCE_HEADER: &str = "x-svc-nonce";

/// The error code a route answers when the caller lacks the capability.
pub trait Forbidden: Send + Sync + 'static {
    const CODE: &'static str;
    /// The capability the routes need.
    const CAPABILITY: &'static str = CAPABILITY;
    /// Whether a failed authentication answers 403 `CODE` too (instead of
    /// the host site's 401s).
    const ALWAYS_FORBIDDEN: bool = false;
    /// The console role that stands for the capability (`None`: the
    /// routes are svc's users' own, no operator's).
    const ROLE: Option<Role> = None;
}

/// The console roles that stand for svc's capabilities; the console shows
/// svc's areas under the same ones (`routes::areas`).
pub mod roles {
    use keel_platform::console::Role;

    /// `svc_manage` on the site's routes (settings, forms, submissions).
    pub const SITE: Role = Role::Forms;
    /// `svc_manage` on the push module's admin routes.
    pub const PUSH: Role = Role::Push;
    /// `svc_manage_admins`.
    pub const ADMINS: Role = Role::Operators;
}

/// Site administration (settings, forms, submissions).
pub struct Site;
impl Forbidden for Site {
    const CODE: &'static str = error::code::REST_FORBIDDEN;
    const ROLE: Option<Role> = Some(roles::SITE);
}

/// What is a signed-in user's own (application passwords, the audit
/// page of svc's API): `svc_manage`, and never an operator.
pub struct Own;
impl Forbidden for Own {
    const CODE: &'static str = error::code::REST_FORBIDDEN;
}

/// Managing the other users (`svc_manage_admins`; in the console, the
/// operators role, as it manages the console's own people).
pub struct Admins;
impl Forbidden for Admins {
    const CODE: &'static str = error::code::REST_FORBIDDEN;
    const CAPABILITY: &'static str = crate::domain::admins::MANAGE_ADMINS;
    const ROLE: Option<Role> = Some(roles::ADMINS);
}

/// The push module's admin routes.
pub struct Push;
impl Forbidden for Push {
    const CODE: &'static str = error::code::PUSH_FORBIDDEN;
    const ALWAYS_FORBIDDEN: bool = true;
    const ROLE: Option<Role> = Some(roles::PUSH);
}

/// Who acts: one of svc's users, or an operator in the console.
pub enum Who {
    User(user::Model),
    Operator(Operator),
}

/// An authenticated user holding `svc_manage` (or an operator with the
/// role that stands for it).
pub struct Admin<F: Forbidden = Site> {
    pub who: Who,
    /// Signed in with an application password (not the cookie session).
    pub by_app_password: bool,
    /// Where the request came from (through trusted proxies).
    pub address: std::net::IpAddr,
    _code: PhantomData<F>,
}

impl<F: Forbidden> Admin<F> {
    /// Who is acting, as the audit log records it.
    pub fn actor(&self) -> keel_platform::audit::Actor {
        match &self.who {
            Who::User(u) => keel_platform::audit::Actor::at(&u.username, self.address),
            Who::Operator(op) => op.actor(),
        }
    }

    /// The svc user acting; an operator is none (403 `CODE`).
    pub fn user(&self) -> Result<&user::Model, Error> {
        match &self.who {
            Who::User(u) => Ok(u),
            Who::Operator(_) => Err(error::not_allowed(F::CODE)),
        }
    }

    /// Who sends, as a send and its `Idempotency-Key` record it.
    pub fn sender(&self) -> Sender {
        match &self.who {
            Who::User(u) => Sender::User(u.id),
            Who::Operator(op) => Sender::Operator(op.id),
        }
    }

    /// Records `entry` as done by this admin.
    pub async fn record(&self, state: &AppState, entry: keel_platform::audit::Entry) {
        keel_platform::audit::record(&state.db, &self.actor(), entry).await;
    }
}

pub fn cookie<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    keel_platform::http::cookies::cookie(&parts.headers, name)
}

fn basic(parts: &Parts) -> Option<Result<(String, String), Error>> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = STANDARD
        .decode(rest.trim())
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    Some(
        decoded
            .and_then(|d| d.split_once(':').map(|(u, p)| (u.to_owned(), p.to_owned())))
            .ok_or_else(error::bad_app_password),
    )
}

/// `_wpnonce` from the query string.
fn query_nonce(parts: &Parts) -> Option<String> {
    form_urlencoded::parse(parts.uri.query()?.as_bytes())
        .find(|(k, _)| k == "_wpnonce")
        .map(|(_, v)| v.into_owned())
}

/// An application password over HTTP Basic, at the platform's guard with
/// no limit: 24 random characters (143 bits) cannot be guessed, so a limit
/// would only hold back the scripts that use them; each refusal is logged
/// and counted like any other.
pub const APP_PASSWORD: Door = Door {
    service: crate::NAME,
    name: "app-password",
    routes: &[],
    per_address: 0,
    per_name: 0,
};

/// The authenticated user (any capability), or 401.
pub async fn authenticate(parts: &Parts, state: &AppState) -> Result<user::Model, Error> {
    if let Some(creds) = basic(parts) {
        let (username, password) = creds?;
        let address = request_client_ip(parts, &state.platform.config.http.trusted_proxies);
        let guard = &state.platform.guard;
        let knock = guard.knock(APP_PASSWORD, address, Some(&username)).await?;
        let found = admin::check_app_password(&state.db, &username, &password).await?;
        return match found {
            Some(u) => {
                knock.accepted();
                Ok(u)
            }
            None => {
                knock.refused();
                Err(error::bad_app_password())
            }
        };
    }
    session(parts, state).await
}

/// The user of the request's cookie session (its nonce checked); an
/// application password does not count.
pub async fn session(parts: &Parts, state: &AppState) -> Result<user::Model, Error> {
    let Some(token) = cookie(parts, cookie_name_of(parts, state)) else {
        return Err(error::not_logged_in());
    };
    let (session, u) = admin::find_session(&state.db, token)
        .await?
        .ok_or_else(error::not_logged_in)?;
    // The host site's convention: a cookie alone is not enough on any
    // method; the session's nonce must come with it (header, or the
    // `_wpnonce` query parameter for plain links such as an export).
    let given = parts
        .headers
        .get(NONCE_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query_nonce(parts))
        .unwrap_or_default();
    if !constant_time_eq(given.as_bytes(), session.nonce.as_bytes()) {
        return Err(error::bad_nonce());
    }
    Ok(u)
}

impl<F: Forbidden> FromRequestParts<AppState> for Admin<F> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let forbidden = || error::not_allowed(F::CODE);
        // Only the console's sign-in layer puts an operator in a request.
        if let Some(op) = parts.extensions.get::<Operator>() {
            return match F::ROLE {
                Some(role) if op.roles.has(role) => Ok(Self {
                    address: op.address,
                    who: Who::Operator(op.clone()),
                    by_app_password: false,
                    _code: PhantomData,
                }),
                _ => Err(forbidden()),
            };
        }
        let by_app_password = basic(parts).is_some();
        let user = match timed(Phase::Auth, authenticate(parts, state)).await {
            Ok(user) => user,
            Err(e) if !e.is_internal() && F::ALWAYS_FORBIDDEN => return Err(forbidden()),
            Err(e) => return Err(e),
        };
        if !has_capability(&user, F::CAPABILITY) {
            return Err(forbidden());
        }
        let address = request_client_ip(parts, &state.platform.config.http.trusted_proxies);
        Ok(Self {
            who: Who::User(user),
            by_app_password,
            address,
            _code: PhantomData,
        })
    }
}
