//! Operators, managed from the console by an operator with the
//! `operators` role (the command line does the same): list, add (the
//! password and the TOTP secret are shown once), set roles, disable,
//! enable, remove. An operator cannot disable or remove themselves.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use keel_platform::audit::Entry;
use keel_platform::console::input::Body;
use keel_platform::console::{Error, ErrorBody, Operator, Role, Roles, code};
use keel_platform::http::NoStore;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

use crate::domain::operators;
use crate::entity::operator;
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct OperatorRow {
    pub name: String,
    pub roles: Vec<Role>,
    pub disabled: bool,
    pub created_at: DateTime<Utc>,
}

fn row(o: &operator::Model) -> OperatorRow {
    OperatorRow {
        name: o.name.clone(),
        roles: Roles::from_stored(&o.roles).iter().collect(),
        disabled: o.disabled_at.is_some(),
        created_at: o.created_at,
    }
}

#[derive(Serialize, ToSchema)]
pub struct OperatorList {
    pub operators: Vec<OperatorRow>,
}

/// Every operator.
#[utoipa::path(get, path = "/console/v1/operators", tag = "operators",
    security(("console_session" = [])),
    responses(
        (status = 200, body = OperatorList),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: the operator lacks the operators role", body = ErrorBody),
    ))]
pub async fn list(
    State(state): State<AppState>,
    op: Operator,
) -> Result<NoStore<Json<OperatorList>>, Error> {
    op.require(Role::Operators)?;
    let all = operators::list(&state.platform.db).await?;
    Ok(NoStore(Json(OperatorList {
        operators: all.iter().map(row).collect(),
    })))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewOperator {
    /// 1 to 60 letters, digits or `. _ - @`.
    #[schema(min_length = 1, max_length = 60, pattern = r"^[A-Za-z0-9._@-]+$")]
    pub name: String,
    pub roles: Vec<Role>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RolesBody {
    pub roles: Vec<Role>,
}

/// What a new operator needs to sign in, shown once.
#[derive(Serialize, ToSchema)]
pub struct Added {
    pub operator: OperatorRow,
    pub password: String,
    /// The TOTP secret (base32), for an authenticator app.
    pub totp_secret: String,
    pub otpauth_url: String,
}

/// Add an operator: its password and second factor are made now and shown
/// once.
#[utoipa::path(post, path = "/console/v1/operators", tag = "operators",
    security(("console_session" = [], "console_csrf" = [])),
    request_body = NewOperator,
    responses(
        (status = 201, body = Added),
        (status = 400, description = "invalid_input: a bad name or role", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, description = "conflict: an operator has this name", body = ErrorBody),
    ))]
pub async fn add(
    State(state): State<AppState>,
    op: Operator,
    Body(body): Body<NewOperator>,
) -> Result<(StatusCode, NoStore<Json<Added>>), Error> {
    op.require(Role::Operators)?;
    let roles = Roles::of(body.roles);
    let p = &state.platform;
    let added = operators::add(&p.db, &p.secrets, body.name.trim(), &roles, None).await?;
    let entry = Entry::new(crate::NAME, "operator_added")
        .on(&added.operator.name)
        .change(None, Some(json!({ "roles": roles.names() })));
    op.record(&p.db, entry).await;
    let answer = Added {
        operator: row(&added.operator),
        password: added.password.unwrap_or_default(),
        totp_secret: added.totp_base32,
        otpauth_url: added.otpauth_url,
    };
    Ok((StatusCode::CREATED, NoStore(Json(answer))))
}

/// Replace an operator's roles.
#[utoipa::path(put, path = "/console/v1/operators/{name}/roles", tag = "operators",
    security(("console_session" = [], "console_csrf" = [])),
    params(("name" = String, Path, description = "The operator")),
    request_body = RolesBody,
    responses(
        (status = 200, body = OperatorRow),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "not_found: no operator has this name", body = ErrorBody),
        (status = 409, description = "conflict: an operator cannot take the operators role from themselves", body = ErrorBody),
    ))]
pub async fn set_roles(
    State(state): State<AppState>,
    op: Operator,
    Path(name): Path<String>,
    Body(body): Body<RolesBody>,
) -> Result<Json<OperatorRow>, Error> {
    op.require(Role::Operators)?;
    let roles = Roles::of(body.roles);
    if is_self(&op, &name) && !roles.has(Role::Operators) {
        return Err(themselves("take the operators role from"));
    }
    let db = &state.platform.db;
    let (before, changed) = operators::set_roles(db, &name, &roles).await?;
    let entry = Entry::new(crate::NAME, "operator_roles_set")
        .on(&changed.name)
        .change(
            Some(json!({ "roles": before.names() })),
            Some(json!({ "roles": roles.names() })),
        );
    op.record(db, entry).await;
    Ok(Json(row(&changed)))
}

fn is_self(op: &Operator, name: &str) -> bool {
    op.name.eq_ignore_ascii_case(name.trim())
}

fn themselves(what: &str) -> Error {
    Error::conflict(
        code::CONFLICT,
        format!("An operator cannot {what} themselves."),
    )
}

/// Disable an operator: refused at sign-in, its sessions end.
#[utoipa::path(post, path = "/console/v1/operators/{name}/disable", tag = "operators",
    security(("console_session" = [], "console_csrf" = [])),
    params(("name" = String, Path, description = "The operator")),
    responses(
        (status = 200, body = OperatorRow),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "conflict: an operator cannot disable themselves", body = ErrorBody),
    ))]
pub async fn disable(
    State(state): State<AppState>,
    op: Operator,
    Path(name): Path<String>,
) -> Result<Json<OperatorRow>, Error> {
    switch(&state, &op, &name, true).await
}

/// Let a disabled operator sign in again.
#[utoipa::path(post, path = "/console/v1/operators/{name}/enable", tag = "operators",
    security(("console_session" = [], "console_csrf" = [])),
    params(("name" = String, Path, description = "The operator")),
    responses(
        (status = 200, body = OperatorRow),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
    ))]
pub async fn enable(
    State(state): State<AppState>,
    op: Operator,
    Path(name): Path<String>,
) -> Result<Json<OperatorRow>, Error> {
    switch(&state, &op, &name, false).await
}

async fn switch(
    state: &AppState,
    op: &Operator,
    name: &str,
    disabled: bool,
) -> Result<Json<OperatorRow>, Error> {
    op.require(Role::Operators)?;
    if is_self(op, name) {
        return Err(themselves(if disabled { "disable" } else { "enable" }));
    }
    let db = &state.platform.db;
    let changed = operators::set_disabled(db, name, disabled).await?;
    let action = if disabled {
        "operator_disabled"
    } else {
        "operator_enabled"
    };
    op.record(db, Entry::new(crate::NAME, action).on(&changed.name))
        .await;
    Ok(Json(row(&changed)))
}

/// Remove an operator and its sessions.
#[utoipa::path(delete, path = "/console/v1/operators/{name}", tag = "operators",
    security(("console_session" = [], "console_csrf" = [])),
    params(("name" = String, Path, description = "The operator")),
    responses(
        (status = 204, description = "Removed"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "conflict: an operator cannot remove themselves", body = ErrorBody),
    ))]
pub async fn remove(
    State(state): State<AppState>,
    op: Operator,
    Path(name): Path<String>,
) -> Result<StatusCode, Error> {
    op.require(Role::Operators)?;
    if is_self(&op, &name) {
        return Err(themselves("remove"));
    }
    let db = &state.platform.db;
    let gone = operators::remove(db, &name).await?;
    op.record(
        db,
        Entry::new(crate::NAME, "operator_removed").on(&gone.name),
    )
    .await;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize, ToSchema)]
pub struct SessionsEnded {
    /// How many of the operator's sessions ended.
    pub sessions: u64,
}

/// End every session of an operator (a lost laptop): they sign in again.
#[utoipa::path(post, path = "/console/v1/operators/{name}/sessions/end", tag = "operators",
    security(("console_session" = [], "console_csrf" = [])),
    params(("name" = String, Path, description = "The operator")),
    responses(
        (status = 200, body = SessionsEnded),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn end_sessions(
    State(state): State<AppState>,
    op: Operator,
    Path(name): Path<String>,
) -> Result<Json<SessionsEnded>, Error> {
    op.require(Role::Operators)?;
    let db = &state.platform.db;
    let target = operators::find(db, &name)
        .await?
        .ok_or_else(|| keel_platform::console::not_found("operator"))?;
    let n = operators::end_sessions(db, target.id).await?;
    let entry = Entry::new(crate::NAME, "operator_sessions_ended")
        .on(&target.name)
        .detail(json!({ "sessions": n }));
    op.record(db, entry).await;
    Ok(Json(SessionsEnded { sessions: n }))
}
