//! The console's session: an HttpOnly, SameSite=Strict cookie (the
//! platform's [`SessionCookie`]) and, on every request that changes
//! something, the session's CSRF token in `X-Console-Csrf`. The layer
//! [`signed_in`] checks both in front of every route but sign-in, and
//! puts the [`Operator`] in the request.

use axum::extract::{Request, State};
use axum::http::Method;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use keel_platform::console::{Error, Operator, Roles, code};
use keel_platform::http::cookies::SessionCookie;
use keel_platform::http::request_client_ip;

use crate::domain::sessions;
use crate::state::AppState;

pub const SESSION: SessionCookie = SessionCookie {
    plain: "keel_console",
    https: "__Host-keel_console",
};

/// The header carrying the session's CSRF token.
pub const CSRF_HEADER: &str = "x-console-csrf";

/// Lets the request in when its session is live (and, unless it only
/// reads, carries the session's CSRF token); else 401 or 403.
pub async fn signed_in(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    match operator(&state, &parts).await {
        Ok(op) => {
            parts.extensions.insert(op);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(e) => e.into_response(),
    }
}

async fn operator(state: &AppState, parts: &Parts) -> Result<Operator, Error> {
    let trusted = &state.platform.config.http.trusted_proxies;
    let not_signed_in =
        || Error::unauthorized(code::NOT_SIGNED_IN, "Sign in to the console first.");
    let token = SESSION.value(parts, trusted).ok_or_else(not_signed_in)?;
    let (session, op) = sessions::find(&state.platform.db, token, state.cfg.sessions)
        .await?
        .ok_or_else(not_signed_in)?;
    let reads = matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS);
    if !reads {
        let sent = parts
            .headers
            .get(CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if !sessions::csrf_matches(&session, sent) {
            return Err(Error::forbidden(
                code::CSRF,
                "This request needs the session's X-Console-Csrf header (sign in again if the page lost it).",
            ));
        }
    }
    Ok(Operator {
        id: op.id,
        name: op.name,
        roles: Roles::from_stored(&op.roles),
        address: request_client_ip(parts, trusted),
    })
}
