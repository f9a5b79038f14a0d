//! A user's records, for an operator: the same export the user can ask
//! for, the removal of a lost passkey, and the deletion of the account
//! (the same erasure as the user's own). Each in the audit log, with the
//! reason given.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header::CONTENT_DISPOSITION;
use axum::response::IntoResponse;
use keel_platform::audit::Entry;
use keel_platform::console::input::Body;
use keel_platform::console::{Error, ErrorBody, Operator, Role};
use keel_platform::http::NoStore;
use serde_json::json;

use super::actions::{Reason, record};
use super::load;
use crate::domain::{auth, deletion, export, passkeys};
use crate::id::PasskeyId;
use crate::routes::{AccountExport, export_of};
use crate::state::AppState;

/// Everything stored about the user that they may see, as their own
/// export gives it (a JSON attachment). Reading it is in the audit log.
#[utoipa::path(get, path = "/console/v1/users/{id}/export", tag = "users",
    security(("console_session" = [])),
    params(("id" = String, Path, description = "The user's id")),
    responses(
        (status = 200, body = AccountExport),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "not_found: no user has this id", body = ErrorBody),
    ))]
pub(super) async fn export(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, Error> {
    op.require(Role::Users)?;
    let u = load(&state, &id).await?;
    let data = export::gather(state.db(), &u)
        .await
        .map_err(Error::internal)?;
    record(
        &state,
        &op,
        &u,
        Entry::new(crate::NAME, "accounts_user_exported"),
    )
    .await;
    let disposition = format!("attachment; filename=\"account-{}.json\"", u.username);
    Ok(NoStore((
        [(CONTENT_DISPOSITION, disposition)],
        Json(export_of(&u, data)),
    )))
}

/// Remove one of the user's passkeys (lost with its device).
#[utoipa::path(post, path = "/console/v1/users/{id}/passkeys/{passkey}/remove", tag = "users",
    security(("console_session" = [], "console_csrf" = [])),
    params(
        ("id" = String, Path, description = "The user's id"),
        ("passkey" = String, Path, description = "The passkey's id"),
    ),
    request_body = Reason,
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "invalid_input: no reason", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "not_found: no such user, or no such passkey of theirs", body = ErrorBody),
    ))]
pub(super) async fn remove_passkey(
    State(state): State<AppState>,
    op: Operator,
    Path((id, passkey)): Path<(String, String)>,
    Body(body): Body<Reason>,
) -> Result<axum::http::StatusCode, Error> {
    op.require(Role::Users)?;
    let why = body.reason.as_str();
    let u = load(&state, &id).await?;
    let key =
        PasskeyId::parse(&passkey).ok_or_else(|| keel_platform::console::not_found("passkey"))?;
    passkeys::remove(state.keys(), &u, &key).await?;
    let entry = Entry::new(crate::NAME, "accounts_passkey_removed")
        .detail(json!({ "reason": why, "passkey": key.as_str() }));
    record(&state, &op, &u, entry).await;
    Ok(axum::http::StatusCode::NO_CONTENT)
}

/// Delete the account: the same erasure as the user's own deletion (their
/// records go, their mails in the queue with them).
#[utoipa::path(post, path = "/console/v1/users/{id}/delete", tag = "users",
    security(("console_session" = [], "console_csrf" = [])),
    params(("id" = String, Path, description = "The user's id")),
    request_body = Reason,
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "invalid_input: no reason", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "not_found: no user has this id", body = ErrorBody),
    ))]
pub(super) async fn delete_user(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
    Body(body): Body<Reason>,
) -> Result<axum::http::StatusCode, Error> {
    op.require(Role::Users)?;
    let why = body.reason.as_str();
    let u = load(&state, &id).await?;
    deletion::delete_by_operator(state.keys(), &state.cfg.app_name, &u).await?;
    // The entry names the account by its id only: the person is erased.
    let entry = Entry::new(crate::NAME, "accounts_user_deleted").detail(json!({ "reason": why }));
    record(&state, &op, &u, entry).await;
    Ok(axum::http::StatusCode::NO_CONTENT)
}

/// Mail the user a new verification token (their first mail went astray).
#[utoipa::path(post, path = "/console/v1/users/{id}/verification-mail", tag = "users",
    security(("console_session" = [], "console_csrf" = [])),
    params(("id" = String, Path, description = "The user's id")),
    request_body = Reason,
    responses(
        (status = 204, description = "Queued for the mail server"),
        (status = 400, description = "invalid_input: no reason", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "not_found: no user has this id", body = ErrorBody),
        (status = 409, description = "conflict: the address is verified already", body = ErrorBody),
    ))]
pub(super) async fn resend_verification(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
    Body(body): Body<Reason>,
) -> Result<axum::http::StatusCode, Error> {
    op.require(Role::Users)?;
    let why = body.reason.as_str();
    let u = load(&state, &id).await?;
    let mail = auth::VerifyMail {
        link: state.cfg.email_verify_link.as_deref(),
        app_name: &state.cfg.app_name,
    };
    if !auth::resend_verification(state.db(), mail, &u).await? {
        return Err(Error::conflict(
            keel_platform::console::code::CONFLICT,
            "This user's address is verified already.",
        ));
    }
    let entry =
        Entry::new(crate::NAME, "accounts_verification_resent").detail(json!({ "reason": why }));
    record(&state, &op, &u, entry).await;
    Ok(axum::http::StatusCode::NO_CONTENT)
}
