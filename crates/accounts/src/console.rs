//! The console's users area (the `users` role): find a user by a prefix
//! of the username, email or id; see them (profile, second factor,
//! passkeys, live sessions, goals); ban (until a time, or until lifted)
//! and unban, end their sessions, remove a lost second factor. Every
//! action takes a reason, which goes to the audit log with the state
//! before and after. No answer holds a hash, a secret or a token.

use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use keel_platform::audit::Entry;
use keel_platform::console::input::{Body, Params};
use keel_platform::console::{Area, Error, ErrorBody, Operator, Role, invalid};
use keel_platform::http::NoStore;
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::{IntoParams, ToSchema};

use crate::domain::{moderation, passkeys, sessions, two_factor, users};
use crate::entity::user;
use crate::id::UserId;
use crate::state::AppState;

/// The area, with its routes given their state.
pub fn area(state: AppState) -> Area {
    let routes = OpenApiRouter::new()
        .routes(routes!(search))
        .routes(routes!(show))
        .routes(routes!(ban))
        .routes(routes!(unban))
        .routes(routes!(end_sessions))
        .routes(routes!(remove_two_factor))
        .with_state(state);
    Area {
        name: "users",
        title: "Users",
        role: Role::Users,
        routes,
    }
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// The start of a username or email (without case) or of an id.
    #[param(min_length = 1, max_length = 254)]
    pub q: String,
}

#[derive(Serialize, ToSchema)]
pub struct UserRow {
    pub id: String,
    pub username: String,
    pub email: String,
    pub email_verified: bool,
    pub banned: bool,
    pub banned_until: Option<DateTime<Utc>>,
    pub two_factor: bool,
    pub created_at: DateTime<Utc>,
}

fn row(u: &user::Model) -> UserRow {
    UserRow {
        id: u.id.clone(),
        username: u.username.clone(),
        email: u.email.clone(),
        email_verified: u.email_verified,
        banned: u.banned_now(),
        banned_until: u.banned_until.filter(|_| u.banned_now()),
        two_factor: u.two_factor,
        created_at: u.created_at,
    }
}

#[derive(Serialize, ToSchema)]
pub struct Found {
    /// At most 50, by username.
    pub users: Vec<UserRow>,
}

/// Users whose username, email or id starts with `q`.
#[utoipa::path(get, path = "/console/v1/users", tag = "users",
    security(("console_session" = [])),
    params(SearchQuery),
    responses(
        (status = 200, body = Found),
        (status = 400, description = "invalid_input: q is missing, empty or longer than 254 characters", body = ErrorBody),
        (status = 401, description = "not_signed_in", body = ErrorBody),
        (status = 403, description = "forbidden: the operator lacks the users role", body = ErrorBody),
    ))]
async fn search(
    State(state): State<AppState>,
    op: Operator,
    Params(q): Params<SearchQuery>,
) -> Result<NoStore<Json<Found>>, Error> {
    op.require(Role::Users)?;
    let text = q.q.trim();
    if text.is_empty() || text.chars().count() > 254 {
        return Err(invalid(
            "q is the start of a username, email or id: 1 to 254 characters.",
        ));
    }
    let found = moderation::search(state.db().read(), text).await?;
    Ok(NoStore(Json(Found {
        users: found.iter().map(row).collect(),
    })))
}

#[derive(Serialize, ToSchema)]
pub struct PasskeyRow {
    pub id: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

#[derive(Serialize, ToSchema)]
pub struct SessionRow {
    pub id: String,
    /// The device, as its browser and system named themselves.
    pub browser: String,
    pub os: String,
    pub platform: String,
    /// Where it signed in from (city and country, when known).
    pub location: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

#[derive(Serialize, ToSchema)]
pub struct UserPage {
    #[serde(flatten)]
    pub user: UserRow,
    pub slug: String,
    pub role: String,
    pub updated_at: DateTime<Utc>,
    pub passkeys: Vec<PasskeyRow>,
    /// Live sessions, newest first.
    pub sessions: Vec<SessionRow>,
    pub weekly_goals: u64,
    pub yearly_goals: u64,
}

async fn load(state: &AppState, id: &str) -> Result<user::Model, Error> {
    let id = UserId::parse(id).ok_or_else(|| keel_platform::console::not_found("user"))?;
    Ok(users::find(state.db().read(), &id).await?)
}

/// A user's page.
#[utoipa::path(get, path = "/console/v1/users/{id}", tag = "users",
    security(("console_session" = [])),
    params(("id" = String, Path, description = "The user's id")),
    responses(
        (status = 200, body = UserPage),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "not_found: no user has this id", body = ErrorBody),
    ))]
async fn show(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
) -> Result<NoStore<Json<UserPage>>, Error> {
    op.require(Role::Users)?;
    let u = load(&state, &id).await?;
    let conn = state.db().read();
    let passkeys = passkeys::list(conn, &u.id).await?;
    let live = sessions::live(conn, &u.id).await?;
    let (weekly, yearly) = moderation::goal_counts(conn, &u.id).await?;
    Ok(NoStore(Json(UserPage {
        user: row(&u),
        slug: u.slug.clone(),
        role: u.role.clone(),
        updated_at: u.updated_at,
        passkeys: passkeys
            .into_iter()
            .map(|p| PasskeyRow {
                id: p.id,
                name: p.name,
                created_at: p.created_at,
                last_used_at: p.last_used_at,
            })
            .collect(),
        sessions: live
            .into_iter()
            .map(|s| SessionRow {
                id: s.id,
                browser: s.browser,
                os: s.os,
                platform: s.platform,
                location: s.location,
                created_at: s.created_at,
                expires_at: s.expire_at,
            })
            .collect(),
        weekly_goals: weekly,
        yearly_goals: yearly,
    })))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Reason {
    /// Why (for the audit log): 1 to 500 characters, not only spaces.
    #[schema(min_length = 1, max_length = 500, pattern = r"\S")]
    pub reason: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BanBody {
    /// Why (for the audit log): 1 to 500 characters, not only spaces.
    #[schema(min_length = 1, max_length = 500, pattern = r"\S")]
    pub reason: String,
    /// When the ban ends by itself (in the future); absent: until lifted.
    pub until: Option<DateTime<Utc>>,
}

fn reason(text: &str) -> Result<String, Error> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > 500 {
        return Err(invalid(
            "reason says why, for the audit log: 1 to 500 characters.",
        ));
    }
    Ok(text.to_owned())
}

/// The user as an action left them.
async fn after(state: &AppState, u: &user::Model) -> Result<Json<UserRow>, Error> {
    let now = users::find(state.db().read(), &UserId::stored(u.id.as_str())).await?;
    Ok(Json(row(&now)))
}

async fn record(state: &AppState, op: &Operator, u: &user::Model, entry: Entry) {
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
async fn ban(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
    Body(body): Body<BanBody>,
) -> Result<Json<UserRow>, Error> {
    op.require(Role::Users)?;
    let why = reason(&body.reason)?;
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
async fn unban(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
    Body(body): Body<Reason>,
) -> Result<Json<UserRow>, Error> {
    op.require(Role::Users)?;
    let why = reason(&body.reason)?;
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
async fn end_sessions(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
    Body(body): Body<Reason>,
) -> Result<Json<Ended>, Error> {
    op.require(Role::Users)?;
    let why = reason(&body.reason)?;
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
async fn remove_two_factor(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
    Body(body): Body<Reason>,
) -> Result<Json<UserRow>, Error> {
    op.require(Role::Users)?;
    let why = reason(&body.reason)?;
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
