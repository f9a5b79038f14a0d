//! The records as existing clients see them: `_id`, `__v`, camelCase,
//! timestamps with milliseconds and `Z`.

use chrono::{DateTime, Utc};
use keel_platform::time::millis;
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::goal_links::YearlyWithWeekly;
use crate::entity::{passkey, session, user, weekly_goal};

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// 24 hex characters.
    #[serde(rename = "_id")]
    pub id: String,
    pub username: String,
    pub email: String,
    pub slug: String,
    pub role: String,
    pub two_factor: bool,
    pub email_verified: bool,
    pub is_banned: bool,
    pub streamer_mode: bool,
    pub notifications: Notifications,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: DateTime<Utc>,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: DateTime<Utc>,
    /// Revision counter, increased by every update.
    #[serde(rename = "__v")]
    pub revision: i32,
}

#[derive(Serialize, ToSchema)]
pub struct Notifications {
    pub email: EmailNotifications,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmailNotifications {
    /// The weekly goals mail.
    pub weekly_goals: bool,
}

impl Notifications {
    pub fn of(u: &user::Model) -> Self {
        Self {
            email: EmailNotifications {
                weekly_goals: u.notify_weekly_goals,
            },
        }
    }
}

impl From<&user::Model> for User {
    fn from(u: &user::Model) -> Self {
        Self {
            id: u.id.clone(),
            username: u.username.clone(),
            email: u.email.clone(),
            slug: u.slug.clone(),
            role: u.role.clone(),
            two_factor: u.two_factor,
            email_verified: u.email_verified,
            is_banned: u.banned_now(),
            streamer_mode: u.streamer_mode,
            notifications: Notifications::of(u),
            created_at: u.created_at,
            updated_at: u.updated_at,
            revision: u.revision,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    #[serde(rename = "_id")]
    pub id: String,
    pub device: Device,
    pub location: String,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub expire_at: DateTime<Utc>,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: DateTime<Utc>,
}

/// Parsed from the User-Agent; `unknown` where it could not be told.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    pub browser: String,
    pub version: String,
    pub platform: String,
    pub os: String,
    pub is_dev: bool,
}

impl From<&session::Model> for Session {
    fn from(s: &session::Model) -> Self {
        Self {
            id: s.id.clone(),
            device: Device {
                browser: s.browser.clone(),
                version: s.version.clone(),
                platform: s.platform.clone(),
                os: s.os.clone(),
                is_dev: s.is_dev,
            },
            location: s.location.clone(),
            expire_at: s.expire_at,
            created_at: s.created_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WeeklyGoal {
    #[serde(rename = "_id")]
    pub id: String,
    /// The owner's id.
    pub user: String,
    pub title: String,
    pub is_completed: bool,
    /// The id of the yearly goal it is in, or `null`.
    pub yearly_goal: Option<String>,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: DateTime<Utc>,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: DateTime<Utc>,
    #[serde(rename = "__v")]
    pub revision: i32,
}

impl From<&weekly_goal::Model> for WeeklyGoal {
    fn from(g: &weekly_goal::Model) -> Self {
        Self {
            id: g.id.clone(),
            user: g.user_id.clone(),
            title: g.title.clone(),
            is_completed: g.is_completed,
            yearly_goal: g.yearly_goal_id.clone(),
            created_at: g.created_at,
            updated_at: g.updated_at,
            revision: g.revision,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct YearlyGoal {
    #[serde(rename = "_id")]
    pub id: String,
    pub user: String,
    pub title: String,
    pub is_completed: bool,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub complete_by: DateTime<Utc>,
    /// The weekly goals it holds, newest first (empty on creation).
    pub weekly: Vec<WeeklyGoal>,
    pub progress: Progress,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: DateTime<Utc>,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: DateTime<Utc>,
    #[serde(rename = "__v")]
    pub revision: i32,
}

/// How far a yearly goal is: its weekly goals completed, of all it holds.
#[derive(Serialize, ToSchema)]
pub struct Progress {
    pub completed: u64,
    pub total: u64,
}

impl From<&YearlyWithWeekly> for YearlyGoal {
    fn from(y: &YearlyWithWeekly) -> Self {
        let g = &y.goal;
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        Self {
            id: g.id.clone(),
            user: g.user_id.clone(),
            title: g.title.clone(),
            is_completed: g.is_completed,
            complete_by: g.complete_by,
            weekly: y.weekly.iter().map(Into::into).collect(),
            progress: Progress {
                completed: count(y.weekly.iter().filter(|w| w.is_completed).count()),
                total: count(y.weekly.len()),
            },
            created_at: g.created_at,
            updated_at: g.updated_at,
            revision: g.revision,
        }
    }
}

/// `{code, message}` success bodies.
#[derive(Serialize, ToSchema)]
pub struct CodeMessage {
    pub code: &'static str,
    pub message: String,
}

impl CodeMessage {
    pub fn new(code: &'static str, message: impl Into<String>) -> keel_platform::http::Json<Self> {
        keel_platform::http::Json(Self {
            code,
            message: message.into(),
        })
    }
}

/// `{code, error}` success bodies: the text field is named `error`.
#[derive(Serialize, ToSchema)]
pub struct CodeError {
    pub code: &'static str,
    pub error: String,
}

/// A stored passkey as its owner sees it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasskeyView {
    /// 24 hex characters.
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    created_at: DateTime<Utc>,
    /// The last sign-in with it, or `null`.
    #[serde(with = "keel_platform::time::millis_opt")]
    #[schema(value_type = Option<String>, format = DateTime)]
    last_used_at: Option<DateTime<Utc>>,
}

impl From<&passkey::Model> for PasskeyView {
    fn from(p: &passkey::Model) -> Self {
        Self {
            id: p.id.clone(),
            name: p.name.clone(),
            created_at: p.created_at,
            last_used_at: p.last_used_at,
        }
    }
}
