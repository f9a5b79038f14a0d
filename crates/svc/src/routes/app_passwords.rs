//! GET and POST /admin/app-passwords, DELETE /admin/app-passwords/{uuid}:
//! the signed-in administrator's own application passwords. A new one is
//! made only from a cookie session, so a leaked application password
//! cannot make more of itself; listing and revoking take either.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use keel_platform::audit::Entry;
use keel_platform::http::{Json, NoStore};
use keel_platform::time::millis;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

use crate::auth::{Admin, Own};
use crate::domain::admin;
use crate::domain::ids::AppPasswordId;
use crate::domain::values::Required;
use crate::entity::app_password;
use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::input::Body;
use crate::routes::failures::*;
use crate::state::AppState;

/// An application password as listed: never its value.
#[derive(Serialize, ToSchema)]
pub struct AppPasswordView {
    uuid: String,
    name: String,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    created_at: DateTime<Utc>,
}

impl From<app_password::Model> for AppPasswordView {
    fn from(p: app_password::Model) -> Self {
        Self {
            uuid: p.id,
            name: p.name,
            created_at: p.created_at,
        }
    }
}

/// A new application password, with its value: shown this once.
#[derive(Serialize, ToSchema)]
pub struct CreatedAppPassword {
    #[serde(flatten)]
    view: AppPasswordView,
    /// 24 characters in groups of four; spaces do not count when it is
    /// used. Stored only as a hash: it cannot be shown again.
    password: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAppPassword {
    /// What it is for (unique for the user).
    name: Required<100>,
}

#[derive(Serialize, ToSchema)]
pub struct Revoked {
    deleted: bool,
    uuid: String,
}

/// The signed-in administrator's application passwords, oldest first.
#[utoipa::path(get, path = "/admin/app-passwords", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    responses((status = 200, body = Vec<AppPasswordView>), NotAdmin))]
pub async fn list_app_passwords(
    State(state): State<AppState>,
    admin: Admin<Own>,
) -> Result<Json<Vec<AppPasswordView>>, Error> {
    let rows = admin::app_passwords_of(&state.db, admin.user()?).await?;
    Ok(Json(rows.into_iter().map(Into::into).collect()))
}

/// A new application password for the signed-in administrator (cookie
/// session only); its value is in this answer and nowhere else.
#[utoipa::path(post, path = "/admin/app-passwords", tag = "admin", security(("session_cookie" = [], "nonce" = [])),
    request_body = NewAppPassword,
    responses(
        (status = 201, body = CreatedAppPassword),
        (status = 400, description = format!("{REST_INVALID_PARAM} or {REST_MISSING_PARAM}: the name"), body = ErrorBody),
        (status = 401, description = format!("{REST_NOT_LOGGED_IN} (no credentials) or {INCORRECT_PASSWORD} (a wrong application password)"), body = ErrorBody),
        (status = 403, description = format!("{REST_FORBIDDEN} (no svc_manage), {REST_COOKIE_INVALID_NONCE} (a session cookie without its nonce) or {APP_PASSWORD_NEEDS_SESSION} (signed in with an application password)"), body = ErrorBody),
        (status = 409, description = DUPLICATE_APP_PASSWORD, body = ErrorBody),
    ))]
pub async fn create_app_password(
    State(state): State<AppState>,
    admin: Admin<Own>,
    Body(new): Body<NewAppPassword>,
) -> Result<NoStore<(StatusCode, Json<CreatedAppPassword>)>, Error> {
    if admin.by_app_password {
        return Err(error::app_password_needs_session());
    }
    let made = admin::create_app_password(&state.db, admin.user()?, new.name.as_str()).await?;
    let entry = Entry::new(crate::NAME, "svc_app_password_created").on(&made.row.id);
    admin
        .record(&state, entry.detail(json!({"name": made.row.name})))
        .await;
    Ok(NoStore((
        StatusCode::CREATED,
        Json(CreatedAppPassword {
            view: made.row.into(),
            password: made.shown,
        }),
    )))
}

/// Revokes one of the signed-in administrator's application passwords; a
/// request signed with it is refused from then on.
#[utoipa::path(delete, path = "/admin/app-passwords/{uuid}", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("uuid" = String, Path, description = "As GET /admin/app-passwords lists it")),
    responses(
        (status = 200, body = Revoked),
        NotAdmin,
        (status = 404, description = APP_PASSWORD_NOT_FOUND, body = ErrorBody),
    ))]
pub async fn revoke_app_password(
    State(state): State<AppState>,
    admin: Admin<Own>,
    Path(uuid): Path<String>,
) -> Result<Json<Revoked>, Error> {
    let uuid = AppPasswordId::parse(&uuid).ok_or_else(error::no_such_app_password)?;
    if !admin::revoke_app_password_by_id(&state.db, admin.user()?, uuid.as_str()).await? {
        return Err(error::no_such_app_password());
    }
    let entry = Entry::new(crate::NAME, "svc_app_password_revoked").on(uuid.as_str());
    admin.record(&state, entry).await;
    Ok(Json(Revoked {
        deleted: true,
        uuid: uuid.into_string(),
    }))
}
