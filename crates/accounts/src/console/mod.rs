//! The console's users area (the `users` role): find a user by a prefix
//! of the username, email or id; see them (profile, second factor,
//! passkeys, live sessions, goals); ban (until a time, or until lifted)
//! and unban, end their sessions, remove a lost second factor. Every
//! action takes a reason, which goes to the audit log with the state
//! before and after. No answer holds a hash, a secret or a token.

use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use keel_platform::console::input::Params;
use keel_platform::console::{Area, Error, ErrorBody, Operator, Role};
use keel_platform::http::NoStore;
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;
use keel_platform::values::{NotBlank, Text};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::domain::{moderation, passkeys, sessions, users};
use crate::entity::user;
use crate::id::UserId;
use crate::state::AppState;

mod actions;
mod records;

/// The area, with its routes given their state.
pub fn area(state: AppState) -> Area {
    let routes = OpenApiRouter::new()
        .routes(routes!(search))
        .routes(routes!(show))
        .routes(routes!(records::delete_user))
        .routes(routes!(actions::ban))
        .routes(routes!(actions::unban))
        .routes(routes!(actions::end_sessions))
        .routes(routes!(actions::remove_two_factor))
        .routes(routes!(records::remove_passkey))
        .routes(routes!(records::export))
        .routes(routes!(records::resend_verification))
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
    #[param(inline)]
    pub q: Text<254, NotBlank>,
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

pub(super) fn row(u: &user::Model) -> UserRow {
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
    let found = moderation::search(state.db().read(), q.q.as_str()).await?;
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
    /// Sign-ins refused lately (a wrong password or code, or while
    /// banned), newest first, at most 20.
    pub refused_sign_ins: Vec<Refusal>,
}

#[derive(Serialize, ToSchema)]
pub struct Refusal {
    pub at: DateTime<Utc>,
    /// `password`, `second factor` or `banned`.
    pub failed: String,
    /// Where the attempt came from.
    pub address: Option<String>,
}

pub(super) async fn load(state: &AppState, id: &str) -> Result<user::Model, Error> {
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
    let refusals = moderation::refused_sign_ins(state.db(), &u.id).await?;
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
        refused_sign_ins: refusals
            .into_iter()
            .map(|(at, failed, address)| Refusal {
                at,
                failed,
                address,
            })
            .collect(),
    })))
}
