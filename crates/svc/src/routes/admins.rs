//! /admin/users: the other users, for an admin holding
//! `svc_manage_admins` (what `keel svc admin ...` does, from the console).
//! Each change is in the audit log.

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use keel_platform::audit::Entry;
use keel_platform::http::{Json, NoStore};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use super::Done;
use crate::auth::{Admin, Admins};
use crate::domain::admins::{self, AdminSummary, Ended};
use crate::error::{self, Error};
use crate::routes::failures::*;
use crate::state::AppState;

/// Every user, oldest first.
#[utoipa::path(get, path = "/admin/users", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    responses((status = 200, body = Vec<AdminSummary>), NotAdminOfAdmins))]
pub async fn list_users(
    State(state): State<AppState>,
    _admin: Admin<Admins>,
) -> Result<Json<Vec<AdminSummary>>, Error> {
    Ok(Json(admins::list(&state.db).await?))
}

/// What disabling or enabling did.
#[derive(Serialize, ToSchema)]
pub struct Disabled {
    username: String,
    disabled: bool,
    /// The ways in that ended (disabling ends them all).
    ended: Ended,
}

/// The user a path names, not the caller (an admin cannot lock themselves
/// out; the command line can). An operator is none of svc's users.
fn other(admin: &Admin<Admins>, username: &str) -> Result<(), Error> {
    if admin.user().is_ok_and(|u| u.username == username) {
        return Err(error::not_yourself());
    }
    Ok(())
}

/// Refuse a user at every door; their sessions and application passwords end.
#[utoipa::path(post, path = "/admin/users/{username}/disable", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("username" = String, Path)),
    responses((status = 200, body = Disabled), NotAdminOfAdmins, NoSuchUser))]
pub async fn disable_user(
    State(state): State<AppState>,
    admin: Admin<Admins>,
    Path(username): Path<String>,
) -> Result<Json<Disabled>, Error> {
    other(&admin, &username)?;
    set_disabled(&state, &admin, username, true).await
}

/// Let a disabled user in again.
#[utoipa::path(post, path = "/admin/users/{username}/enable", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("username" = String, Path)),
    responses((status = 200, body = Disabled), NotAdminOfAdmins, NoSuchUser))]
pub async fn enable_user(
    State(state): State<AppState>,
    admin: Admin<Admins>,
    Path(username): Path<String>,
) -> Result<Json<Disabled>, Error> {
    set_disabled(&state, &admin, username, false).await
}

async fn set_disabled(
    state: &AppState,
    admin: &Admin<Admins>,
    username: String,
    disabled: bool,
) -> Result<Json<Disabled>, Error> {
    let (was, ended) = admins::set_disabled(&state.db, &username, disabled).await?;
    let action = if disabled {
        "svc_admin_disabled"
    } else {
        "svc_admin_enabled"
    };
    let entry = Entry::new(crate::NAME, action)
        .on(&username)
        .change(
            Some(json!({"disabled": was})),
            Some(json!({"disabled": disabled})),
        )
        .detail(json!(ended));
    admin.record(state, entry).await;
    Ok(Json(Disabled {
        username,
        disabled,
        ended,
    }))
}

/// A new login password, shown once.
#[derive(Serialize, ToSchema)]
pub struct NewPassword {
    username: String,
    /// Give it to the user; it is in this answer and nowhere else.
    password: String,
    /// Their cookie sessions that ended.
    sessions_ended: u64,
}

/// Set a new random login password for a user; their cookie sessions end.
/// The answer is `Cache-Control: no-store`.
#[utoipa::path(post, path = "/admin/users/{username}/password", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("username" = String, Path)),
    responses((status = 200, body = NewPassword), NotAdminOfAdmins, NoSuchUser))]
pub async fn reset_password(
    State(state): State<AppState>,
    admin: Admin<Admins>,
    Path(username): Path<String>,
) -> Result<Response, Error> {
    let (password, sessions_ended) = admins::set_password(&state.db, &username, None).await?;
    let entry = Entry::new(crate::NAME, "svc_admin_password_set")
        .on(&username)
        .detail(json!({"sessions_ended": sessions_ended}));
    admin.record(&state, entry).await;
    let body = Json(NewPassword {
        username,
        password,
        sessions_ended,
    });
    Ok(NoStore(body).into_response())
}

/// End every cookie session of a user and revoke their application passwords.
#[utoipa::path(post, path = "/admin/users/{username}/end-sessions", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("username" = String, Path)),
    responses((status = 200, body = Ended), NotAdminOfAdmins, NoSuchUser))]
pub async fn end_sessions(
    State(state): State<AppState>,
    admin: Admin<Admins>,
    Path(username): Path<String>,
) -> Result<Json<Ended>, Error> {
    let ended = admins::end_sessions(&state.db, &username).await?;
    let entry = Entry::new(crate::NAME, "svc_admin_sessions_ended").on(&username);
    admin.record(&state, entry.detail(json!(ended))).await;
    Ok(Json(ended))
}

/// Remove a user with their sessions and application passwords.
#[utoipa::path(delete, path = "/admin/users/{username}", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("username" = String, Path)),
    responses(
        (status = 200, body = Done),
        NotAdminOfAdmins,
        NoSuchUser,
    ))]
pub async fn remove_user(
    State(state): State<AppState>,
    admin: Admin<Admins>,
    Path(username): Path<String>,
) -> Result<Json<Done>, Error> {
    other(&admin, &username)?;
    let removed = admins::remove(&state.db, &username).await?;
    let entry = Entry::new(crate::NAME, "svc_admin_removed").on(&removed.username);
    admin.record(&state, entry).await;
    Ok(Json(Done::OK))
}
