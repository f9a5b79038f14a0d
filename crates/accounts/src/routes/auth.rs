//! `/auth/*`: getting and ending tokens (beyond the account API; see docs/accounts.md).

use axum::extract::{Path, State};
use keel_platform::http::{Json, NoStore};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::limits;
use crate::auth::Authed;
use crate::domain::auth;
use crate::domain::fields::{Email, NewPassword, Password, Username};
use crate::domain::sent::{Given, Sent};
use crate::domain::sessions::{self, Client};
use crate::error::code::*;
use crate::error::{Error, ErrorBody};
use crate::input::{Input, lenient_string};
use crate::routes::failures::*;
use crate::state::AppState;
use crate::views::{self, CodeMessage};

#[derive(Deserialize, ToSchema)]
pub struct RegisterBody {
    /// 3 to 30 characters of `a-z A-Z 0-9 _ . -`, not taken (in any case).
    username: Sent<Username>,
    /// A valid address of at most 254 characters, not taken.
    email: Sent<Email>,
    /// 8 to 128 characters, not one of the commonly used passwords.
    password: Sent<NewPassword>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthResponse {
    user: views::User,
    /// Short-lived JWT for `Authorization: Bearer`.
    access_token: String,
    /// Long-lived; exchange at POST /auth/refresh (each use spends it).
    refresh_token: String,
}

pub(super) fn tokens(
    user: &crate::entity::user::Model,
    pair: sessions::TokenPair,
) -> NoStore<Json<AuthResponse>> {
    NoStore(Json(AuthResponse {
        user: user.into(),
        access_token: pair.access_token,
        refresh_token: pair.refresh_token,
    }))
}

/// Create an account; a verification mail goes to its address.
#[utoipa::path(post, path = "/auth/register", tag = "auth",
    request_body(content((RegisterBody = "application/x-www-form-urlencoded"), (RegisterBody = "application/json"))),
    responses(
        (status = 200, description = "Registered and logged in", body = AuthResponse),
        Invalid,
        (status = 409, description = format!("{USERNAME_TAKEN} or {EMAIL_TAKEN}"), body = ErrorBody),
        (status = 429, description = format!("{TOO_MANY_REQUESTS}: too many registrations from this address this minute; Retry-After"), body = ErrorBody),
    ))]
pub async fn register(
    State(state): State<AppState>,
    client: Client,
    Input(body): Input<RegisterBody>,
) -> Result<NoStore<Json<AuthResponse>>, Error> {
    limits::register(&state, client.ip).await?;
    let username = body.username.parse("username")?;
    let email = body.email.parse("email")?;
    let context = [username.as_str(), email.as_str(), email.local_part()];
    let password = Password::parse("password", body.password.parse("password")?, &context)?;
    let registration = auth::Registration {
        username,
        email,
        password,
    };
    let verify_link = state.cfg.email_verify_link.as_deref();
    let (user, pair) = auth::register(
        state.db(),
        &state.issuer(),
        auth::VerifyMail {
            link: verify_link,
            app_name: &state.cfg.app_name,
        },
        registration,
        &client,
    )
    .await?;
    Ok(tokens(&user, pair))
}

#[derive(Deserialize, ToSchema)]
pub struct LoginBody {
    /// Username or email.
    login: Sent<Given>,
    password: Sent<Given>,
    /// When two-factor is on: a code from the authenticator app, or an unused backup code.
    #[serde(default, deserialize_with = "lenient_string")]
    code: Option<String>,
}

/// Log in; opens a session.
#[utoipa::path(post, path = "/auth/login", tag = "auth",
    request_body(content((LoginBody = "application/x-www-form-urlencoded"), (LoginBody = "application/json"))),
    responses(
        (status = 200, description = "Logged in", body = AuthResponse),
        Invalid,
        (status = 401, description = format!("{INVALID_CREDENTIALS}, {TWO_FACTOR_REQUIRED} or {INVALID_CODE}"), body = ErrorBody),
        Banned,
        (status = 429, description = format!("{TOO_MANY_ATTEMPTS} (too many wrong codes) or {TOO_MANY_REQUESTS} (too many sign-ins from this address, or for this login, this minute; Retry-After)"), body = ErrorBody),
    ))]
pub async fn login(
    State(state): State<AppState>,
    client: Client,
    Input(body): Input<LoginBody>,
) -> Result<NoStore<Json<AuthResponse>>, Error> {
    let attempt = auth::Login {
        login: body.login.parse("login")?.into_string(),
        password: body.password.parse("password")?.into_string(),
        code: body.code,
    };
    let knock = limits::knock(&state, limits::LOGIN, client.ip, Some(&attempt.login)).await?;
    let issuer = state.issuer();
    let (user, pair) = auth::login(state.keys(), &issuer, attempt, knock, &client).await?;
    Ok(tokens(&user, pair))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshBody {
    refresh_token: Sent<Given>,
}

/// Exchange a refresh token for a new pair; the old refresh token is spent,
/// and presenting it again revokes the session.
#[utoipa::path(post, path = "/auth/refresh", tag = "auth",
    request_body(content((RefreshBody = "application/x-www-form-urlencoded"), (RefreshBody = "application/json"))),
    responses(
        (status = 200, description = "A new token pair", body = AuthResponse),
        (status = 400, description = "refreshToken is missing", body = ErrorBody),
        (status = 401, description = "Unknown, expired or reused refresh token", body = ErrorBody),
        Banned,
    ))]
pub async fn refresh(
    State(state): State<AppState>,
    Input(body): Input<RefreshBody>,
) -> Result<NoStore<Json<AuthResponse>>, Error> {
    let token = body.refresh_token.parse("refreshToken")?.into_string();
    let (user, pair) =
        sessions::refresh(state.db(), &state.sessions, &state.issuer(), &token).await?;
    Ok(tokens(&user, pair))
}

/// End the current session.
#[utoipa::path(post, path = "/auth/logout", tag = "auth", security(("bearer" = [])),
    responses(
        (status = 200, description = "LOGGED_OUT", body = CodeMessage),
        (status = 401, description = "Missing, invalid or expired token", body = ErrorBody),
    ))]
pub async fn logout(State(state): State<AppState>, me: Authed) -> Result<Json<CodeMessage>, Error> {
    sessions::revoke(state.db(), &state.sessions, &me.user.id, &me.session_id).await?;
    Ok(CodeMessage::new("LOGGED_OUT", "Logged out"))
}

/// Confirm the address a verification mail was sent to (the token is the credential).
#[utoipa::path(put, path = "/auth/verify-email/{token}", tag = "auth",
    params(("token" = String, Path, description = "The token from the verification mail")),
    responses(
        (status = 200, description = "EMAIL_VERIFIED", body = CodeMessage),
        (status = 400, description = format!("{INVALID_TOKEN}: unknown, used or expired"), body = ErrorBody),
    ))]
pub async fn verify_email(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Result<Json<CodeMessage>, Error> {
    auth::verify_email(state.db(), &state.sessions, &token).await?;
    Ok(CodeMessage::new(
        "EMAIL_VERIFIED",
        "Your email address is verified",
    ))
}
