//! What an operator does to a user: ban (until a time, or until lifted),
//! unban, end every session, remove the second factor. Each takes a
//! reason, kept in the audit log with the state before and after.

use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use keel_platform::audit::Entry;
use keel_platform::console::input::Body;
use keel_platform::console::{Error, ErrorBody, Operator, Role, invalid};
use keel_platform::values::{NotBlank, Text};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

use super::{UserRow, load, row};
use crate::domain::{moderation, two_factor, users};
use crate::entity::user;
use crate::id::UserId;
use crate::state::AppState;

/// Why an operator acts, for the audit log: not blank, at most 500
/// characters, kept trimmed.
pub type Why = Text<500, NotBlank>;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Reason {
    /// Why (for the audit log).
    #[schema(inline)]
    pub reason: Why,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BanBody {
    /// Why (for the audit log).
    #[schema(inline)]
    pub reason: Why,
    /// When the ban ends by itself (in the future); absent: until lifted.
    pub until: Option<DateTime<Utc>>,
}

/// The user as an action left them.
async fn after(state: &AppState, u: &user::Model) -> Result<Json<UserRow>, Error> {
    let now = users::find(state.db().read(), &UserId::stored(u.id.as_str())).await?;
    Ok(Json(row(&now)))
}

pub(super) async fn record(state: &AppState, op: &Operator, u: &user::Model, entry: Entry) {
    op.record(state.db(), entry.on(u.id.as_str())).await;
}

/// Ban the user: every request, sign-in and refresh of theirs is answered
/// 403 `ACCOUNT_BANNED` on every node from now on, until `until` or until
/// lifted.
#[utoipa::path(post, path = "/console/v1/users/{id}/ban", tag = "users",
    security(("console_session" = [], "console_csrf" = [])),
    params(("id" = String, Path, description = "The user's id")),
    request_body = BanBody,
    responses(
        (status = 200, body = UserRow),
        (status = 400, description = "invalid_input: no reason, or `until` is not in the future", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub(super) async fn ban(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
    Body(body): Body<BanBody>,
) -> Result<Json<UserRow>, Error> {
    op.require(Role::Users)?;
    let why = body.reason.as_str();
    if body.until.is_some_and(|t| t <= Utc::now()) {
        return Err(invalid("until is when the ban ends: a time in the future."));
    }
    let u = load(&state, &id).await?;
    moderation::ban(state.db().write(), &state.sessions, &u, body.until).await?;
    let done = after(&state, &u).await?;
    let entry = Entry::new(crate::NAME, "accounts_user_banned")
        .change(
            Some(moderation::ban_state(&u)),
            Some(json!({ "banned": true, "until": body.until })),
        )
        .detail(json!({ "reason": why }));
    record(&state, &op, &u, entry).await;
    Ok(done)
}

/// Lift the user's ban.
#[utoipa::path(post, path = "/console/v1/users/{id}/unban", tag = "users",
    security(("console_session" = [], "console_csrf" = [])),
    params(("id" = String, Path, description = "The user's id")),
    request_body = Reason,
    responses(
        (status = 200, body = UserRow),
        (status = 400, description = "invalid_input: no reason", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub(super) async fn unban(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
    Body(body): Body<Reason>,
) -> Result<Json<UserRow>, Error> {
    op.require(Role::Users)?;
    let why = body.reason.as_str();
    let u = load(&state, &id).await?;
    moderation::unban(state.db().write(), &state.sessions, &u).await?;
    let done = after(&state, &u).await?;
    let entry = Entry::new(crate::NAME, "accounts_user_unbanned")
        .change(
            Some(moderation::ban_state(&u)),
            Some(json!({ "banned": false })),
        )
        .detail(json!({ "reason": why }));
    record(&state, &op, &u, entry).await;
    Ok(done)
}

#[derive(Serialize, ToSchema)]
pub struct Ended {
    /// How many live sessions ended.
    pub sessions: u64,
}

/// End every live session of the user (their refresh tokens stop working
/// at once, on every node).
#[utoipa::path(post, path = "/console/v1/users/{id}/sessions/end", tag = "users",
    security(("console_session" = [], "console_csrf" = [])),
    params(("id" = String, Path, description = "The user's id")),
    request_body = Reason,
    responses(
        (status = 200, body = Ended),
        (status = 400, description = "invalid_input: no reason", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub(super) async fn end_sessions(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
    Body(body): Body<Reason>,
) -> Result<Json<Ended>, Error> {
    op.require(Role::Users)?;
    let why = body.reason.as_str();
    let u = load(&state, &id).await?;
    let n = moderation::end_sessions(state.db().write(), &state.sessions, &u).await?;
    let entry = Entry::new(crate::NAME, "accounts_sessions_ended")
        .detail(json!({ "reason": why, "sessions": n }));
    record(&state, &op, &u, entry).await;
    Ok(Json(Ended { sessions: n }))
}

/// Remove the user's second factor (TOTP and its backup codes), after
/// checking who asks: they then sign in with their password alone.
#[utoipa::path(post, path = "/console/v1/users/{id}/two-factor/remove", tag = "users",
    security(("console_session" = [], "console_csrf" = [])),
    params(("id" = String, Path, description = "The user's id")),
    request_body = Reason,
    responses(
        (status = 200, body = UserRow),
        (status = 400, description = "invalid_input: no reason", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "conflict: the user has no second factor", body = ErrorBody),
    ))]
pub(super) async fn remove_two_factor(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
    Body(body): Body<Reason>,
) -> Result<Json<UserRow>, Error> {
    op.require(Role::Users)?;
    let why = body.reason.as_str();
    let u = load(&state, &id).await?;
    two_factor::remove(state.keys(), &u).await?;
    let done = after(&state, &u).await?;
    let entry = Entry::new(crate::NAME, "accounts_two_factor_removed")
        .change(
            Some(json!({ "two_factor": true })),
            Some(json!({ "two_factor": false })),
        )
        .detail(json!({ "reason": why }));
    record(&state, &op, &u, entry).await;
    Ok(done)
}
