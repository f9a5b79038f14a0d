//! `/account/*`: the account self-service endpoints.

use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use keel_platform::http::{Json, NoStore};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::limits;
use crate::auth::Authed;
use crate::domain::email::{self, Mailing};
use crate::domain::fields::{Email, NewPassword, Password, Username};
use crate::domain::sent::{Code, Given, Sent};
use crate::domain::sessions::Client;
use crate::domain::{profile, sessions, two_factor};
use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::id::SessionId;
use crate::input::{Input, Params};
use crate::routes::failures::*;
use crate::state::AppState;
use crate::state::Inner;
use crate::views::{self, CodeError, CodeMessage};

#[derive(Serialize, ToSchema)]
pub struct AccountResponse {
    user: views::User,
}

/// The logged-in user's account.
#[utoipa::path(get, path = "/account", tag = "account", security(("bearer" = [])),
    responses(
        (status = 200, body = AccountResponse),
        (status = 401, description = "Missing, invalid or expired token, or ended session", body = ErrorBody),
        Banned,
    ))]
pub async fn get_account(me: Authed) -> Json<AccountResponse> {
    Json(AccountResponse {
        user: me.user.as_ref().into(),
    })
}

fn done(code: &'static str, message: impl Into<String>) -> Json<CodeMessage> {
    CodeMessage::new(code, message)
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TwoFactorStarted {
    /// `PENDING_VERIFICATION`
    code: &'static str,
    /// Status text.
    error: String,
    /// PNG of the otpauth QR code, `data:image/png;base64,...`.
    qrcode: String,
    /// The shared secret, base32.
    two_factor_secret: String,
}

/// Start two-factor setup: a new secret, pending until confirmed.
#[utoipa::path(post, path = "/account/two-factor", tag = "account", security(("bearer" = [])),
    responses(
        (status = 200, description = "PENDING_VERIFICATION", body = TwoFactorStarted),
        (status = 409, description = TWO_FACTOR_ALREADY_ENABLED, body = ErrorBody),
    ))]
pub async fn start_two_factor(
    State(state): State<AppState>,
    me: Authed,
) -> Result<NoStore<Json<TwoFactorStarted>>, Error> {
    let e = two_factor::start(state.keys(), &state.cfg.totp_issuer, &me.user).await?;
    Ok(NoStore(Json(TwoFactorStarted {
        code: "PENDING_VERIFICATION",
        error: "Two-factor authentication is pending verification".to_owned(),
        qrcode: e.qr_data_uri,
        two_factor_secret: e.secret_base32,
    })))
}

#[derive(Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CodeBody {
    /// The code from the authenticator app.
    code: Sent<Code>,
}

/// Confirm two-factor setup with a code of the pending secret.
#[utoipa::path(put, path = "/account/two-factor", tag = "account", security(("bearer" = [])),
    request_body(content((CodeBody = "application/x-www-form-urlencoded"), (CodeBody = "application/json"))),
    responses(
        (status = 200, description = "TWO_FACTOR_ENABLED", body = CodeMessage),
        CodeRefused,
        (status = 409, description = format!("{TWO_FACTOR_ALREADY_ENABLED} or {TWO_FACTOR_NOT_PENDING}"), body = ErrorBody),
    ))]
pub async fn confirm_two_factor(
    State(state): State<AppState>,
    me: Authed,
    Input(body): Input<CodeBody>,
) -> Result<Json<CodeMessage>, Error> {
    let code = body.code.parse("code")?.into_string();
    two_factor::confirm(state.keys(), &me.user, &code).await?;
    Ok(done(
        "TWO_FACTOR_ENABLED",
        "Two-factor authentication is on",
    ))
}

/// Turn two-factor off; takes a code from the app or a backup code.
#[utoipa::path(delete, path = "/account/two-factor", tag = "account", security(("bearer" = [])),
    params(CodeBody),
    responses(
        (status = 200, description = "TWO_FACTOR_DISABLED", body = CodeMessage),
        CodeRefused,
        (status = 409, description = TWO_FACTOR_NOT_ENABLED, body = ErrorBody),
    ))]
pub async fn disable_two_factor(
    State(state): State<AppState>,
    me: Authed,
    Params(q): Params<CodeBody>,
) -> Result<Json<CodeMessage>, Error> {
    let code = q.code.parse("code")?.into_string();
    two_factor::disable(state.keys(), &me.user, &code).await?;
    Ok(done(
        "TWO_FACTOR_DISABLED",
        "Two-factor authentication is off",
    ))
}

/// The unused backup codes as plain text, separated by single spaces.
#[utoipa::path(get, path = "/account/two-factor/backup-codes", tag = "account", security(("bearer" = [])),
    responses(
        (status = 200, description = "8-digit codes separated by a space", body = String, content_type = "text/plain; charset=utf-8"),
        (status = 403, description = TWO_FACTOR_NOT_ENABLED, body = ErrorBody),
    ))]
pub async fn backup_codes(
    State(state): State<AppState>,
    me: Authed,
) -> Result<impl IntoResponse, Error> {
    let codes = two_factor::backup_codes(state.keys(), &me.user).await?;
    Ok(NoStore((
        [(CONTENT_TYPE, "text/plain; charset=utf-8")],
        codes.join(" "),
    )))
}

#[derive(Deserialize, ToSchema)]
pub struct EmailBody {
    /// The new address: valid, at most 254 characters.
    email: Sent<Email>,
}

/// Start changing the email address: a token goes to the new address.
#[utoipa::path(post, path = "/account/change-email", tag = "account", security(("bearer" = [])),
    request_body(content((EmailBody = "application/x-www-form-urlencoded"), (EmailBody = "application/json"))),
    responses(
        (status = 200, description = "PENDING_CONFIRMATION", body = CodeMessage),
        Invalid,
        (status = 409, description = EMAIL_TAKEN, body = ErrorBody),
        (status = 429, description = format!("{TOO_MANY_REQUESTS}: a confirmation was just sent"), body = ErrorBody),
    ))]
pub async fn change_email(
    State(state): State<AppState>,
    me: Authed,
    Input(body): Input<EmailBody>,
) -> Result<Json<CodeMessage>, Error> {
    let new = body.email.parse("email")?;
    email::start(state.db(), mailing(&state), &me.user, &new).await?;
    Ok(done(
        "PENDING_CONFIRMATION",
        format!("A confirmation was sent to {}", new.as_str()),
    ))
}

/// Send the confirmation again (a new token; the old one stops working).
#[utoipa::path(post, path = "/account/change-email/resend", tag = "account", security(("bearer" = [])),
    responses(
        (status = 200, description = "PENDING_CONFIRMATION", body = CodeMessage),
        (status = 409, description = EMAIL_CHANGE_NOT_PENDING, body = ErrorBody),
        (status = 429, description = TOO_MANY_REQUESTS, body = ErrorBody),
    ))]
pub async fn resend_email_change(
    State(state): State<AppState>,
    me: Authed,
) -> Result<Json<CodeMessage>, Error> {
    email::resend(state.db(), mailing(&state), &me.user).await?;
    Ok(done(
        "PENDING_CONFIRMATION",
        "The confirmation was sent again",
    ))
}

/// Confirm the change with the token from the mail.
#[utoipa::path(put, path = "/account/change-email/{email_token}", tag = "account", security(("bearer" = [])),
    params(("email_token" = String, Path, description = "The token from the confirmation mail")),
    responses(
        (status = 200, description = "EMAIL_CHANGED", body = CodeMessage),
        (status = 400, description = format!("{INVALID_TOKEN}: no pending change, or unknown or expired token"), body = ErrorBody),
        (status = 409, description = format!("{EMAIL_TAKEN} (taken meanwhile)"), body = ErrorBody),
    ))]
pub async fn confirm_email_change(
    State(state): State<AppState>,
    me: Authed,
    Path(token): Path<String>,
) -> Result<Json<CodeMessage>, Error> {
    let new = email::confirm(
        state.db(),
        &state.sessions,
        &state.cfg.app_name,
        &me.user,
        &token,
    )
    .await?;
    Ok(done(
        "EMAIL_CHANGED",
        format!("Your email address is now {new}"),
    ))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordBody {
    old_password: Sent<Given>,
    /// 8 to 128 characters, not one of the commonly used passwords.
    new_password: Sent<NewPassword>,
}

/// Change the password; every other session ends.
#[utoipa::path(put, path = "/account/change-password", tag = "account", security(("bearer" = [])),
    request_body(content((PasswordBody = "application/x-www-form-urlencoded"), (PasswordBody = "application/json"))),
    responses(
        (status = 200, description = "PASSWORD_CHANGED", body = CodeMessage),
        (status = 400, description = format!("{VALIDATION_ERROR} or {INVALID_PASSWORD}"), body = ErrorBody),
        (status = 429, description = format!("{TOO_MANY_REQUESTS}: too many password checks from this address, or for this user, this minute; Retry-After"), body = ErrorBody),
    ))]
pub async fn change_password(
    State(state): State<AppState>,
    me: Authed,
    client: Client,
    Input(body): Input<PasswordBody>,
) -> Result<Json<CodeMessage>, Error> {
    let old = body.old_password.parse("oldPassword")?.into_string();
    let local = me.user.email.split('@').next().unwrap_or_default();
    let context = [me.user.username.as_str(), me.user.email.as_str(), local];
    let new = Password::parse(
        "newPassword",
        body.new_password.parse("newPassword")?,
        &context,
    )?;
    let knock = limits::knock(&state, limits::PROOF, client.ip, Some(&me.user.id)).await?;
    let current = me.session_id.as_str();
    let change = profile::PasswordChange { old, new, knock };
    profile::change_password(state.db(), &state.sessions, &me.user, current, change).await?;
    Ok(done("PASSWORD_CHANGED", "Your password was changed"))
}

#[derive(Deserialize, ToSchema)]
pub struct UsernameBody {
    /// 3 to 30 characters of `a-z A-Z 0-9 _ . -`, not taken (in any case).
    username: Sent<Username>,
}

/// Change the username (the slug follows).
#[utoipa::path(put, path = "/account/change-username", tag = "account", security(("bearer" = [])),
    request_body(content((UsernameBody = "application/x-www-form-urlencoded"), (UsernameBody = "application/json"))),
    responses(
        (status = 200, description = "USERNAME_CHANGED; the message contains the new username", body = CodeMessage),
        Invalid,
        (status = 409, description = USERNAME_TAKEN, body = ErrorBody),
    ))]
pub async fn change_username(
    State(state): State<AppState>,
    me: Authed,
    Input(body): Input<UsernameBody>,
) -> Result<Json<CodeMessage>, Error> {
    let name = body.username.parse("username")?;
    profile::change_username(state.db(), &state.sessions, &me.user, &name).await?;
    Ok(done(
        "USERNAME_CHANGED",
        format!("Your username is now {}", name.as_str()),
    ))
}

#[derive(Serialize, ToSchema)]
pub struct SessionsResponse {
    sessions: Vec<views::Session>,
}

/// Live sessions, newest first.
#[utoipa::path(get, path = "/account/sessions", tag = "account", security(("bearer" = [])),
    responses((status = 200, body = SessionsResponse)))]
pub async fn list_sessions(
    State(state): State<AppState>,
    me: Authed,
) -> Result<Json<SessionsResponse>, Error> {
    let list = sessions::live(state.db().read(), &me.user.id).await?;
    Ok(Json(SessionsResponse {
        sessions: list.iter().map(Into::into).collect(),
    }))
}

/// Revoke one session (the current one included, if named).
#[utoipa::path(delete, path = "/account/sessions/{session_id}", tag = "account", security(("bearer" = [])),
    params(("session_id" = String, Path, description = "A session's `_id`", pattern = r"^[0-9a-fA-F]{24}$")),
    responses(
        (status = 200, description = "SESSION_REVOKED", body = CodeError),
        (status = 400, description = INVALID_ID, body = ErrorBody),
        (status = 404, description = "No such live session of this user", body = ErrorBody),
    ))]
pub async fn revoke_session(
    State(state): State<AppState>,
    me: Authed,
    Path(session_id): Path<String>,
) -> Result<Json<CodeError>, Error> {
    let id = SessionId::parse_as("session_id", &session_id)?;
    if !sessions::revoke(state.db(), &state.sessions, &me.user.id, &id).await? {
        return Err(error::no_such_session());
    }
    Ok(Json(CodeError {
        code: "SESSION_REVOKED",
        error: "Session revoked".to_owned(),
    }))
}

/// Revoke every session, the current one included.
#[utoipa::path(delete, path = "/account/sessions", tag = "account", security(("bearer" = [])),
    responses(
        (status = 200, description = "ALL_SESSIONS_REVOKE", body = CodeError),
    ))]
pub async fn revoke_all_sessions(
    State(state): State<AppState>,
    me: Authed,
) -> Result<Json<CodeError>, Error> {
    sessions::revoke_all(state.db().write(), &me.user.id, None).await?;
    state.sessions.user_changed(&me.user.id).await;
    Ok(Json(CodeError {
        code: "ALL_SESSIONS_REVOKE",
        error: "All sessions revoked".to_owned(),
    }))
}

/// How change-of-address confirmations are mailed.
fn mailing(state: &Inner) -> Mailing<'_> {
    Mailing {
        app_name: &state.cfg.app_name,
        link: state.cfg.email_change_link.as_deref(),
        resend_interval: state.cfg.email_resend_interval,
    }
}
