//! `/goals/yearly*`: yearly goals and the weekly goals they hold.

use axum::extract::{Path, State};
use keel_platform::http::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Authed;
use crate::domain::fields::{CompleteBy, Title};
use crate::domain::sent::Sent;
use crate::domain::{goal_links, goals};
use crate::error::{Error, ErrorBody};
use crate::id::GoalId;
use crate::input::Input;
use crate::routes::failures::*;
use crate::state::AppState;
use crate::views::{self, CodeMessage};

#[derive(Serialize, ToSchema)]
pub struct YearlyList {
    goals: Vec<views::YearlyGoal>,
    total: u64,
}

/// The user's yearly goals, newest first, with their count.
#[utoipa::path(get, path = "/goals/yearly", tag = "goals", security(("bearer" = [])),
    responses((status = 200, body = YearlyList)))]
pub async fn list_yearly(
    State(state): State<AppState>,
    me: Authed,
) -> Result<Json<YearlyList>, Error> {
    let list = goal_links::yearly_list(state.db(), &me.user_id()).await?;
    Ok(Json(YearlyList {
        total: u64::try_from(list.len()).unwrap_or(u64::MAX),
        goals: list.iter().map(Into::into).collect(),
    }))
}

/// One yearly goal, the object itself.
#[utoipa::path(get, path = "/goals/yearly/{goal_id}", tag = "goals", security(("bearer" = [])),
    params(("goal_id" = String, Path, description = "yearlyGoalId", pattern = r"^[0-9a-fA-F]{24}$")),
    responses(
        (status = 200, body = views::YearlyGoal),
        NoSuchGoal,
    ))]
pub async fn get_yearly(
    State(state): State<AppState>,
    me: Authed,
    Path(goal_id): Path<String>,
) -> Result<Json<views::YearlyGoal>, Error> {
    let id = GoalId::parse_as("goal_id", &goal_id)?;
    Ok(Json(
        (&goal_links::yearly_get(state.db(), &me.user_id(), &id).await?).into(),
    ))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct YearlyBody {
    /// 1 to 200 characters, not blank (kept trimmed).
    title: Sent<Title>,
    /// A real calendar date written `MM/DD/YYYY` (one-digit month and day
    /// allowed); the pattern spells out which dates exist.
    complete_by: Sent<CompleteBy>,
}

#[derive(Serialize, ToSchema)]
pub struct YearlyCreated {
    goal: views::YearlyGoal,
    message: String,
}

/// Create a yearly goal; `completeBy` is a date written MM/DD/YYYY.
#[utoipa::path(post, path = "/goals/yearly", tag = "goals", security(("bearer" = [])),
    request_body(content((YearlyBody = "application/x-www-form-urlencoded"), (YearlyBody = "application/json"))),
    responses(
        (status = 200, body = YearlyCreated),
        Invalid,
        GoalLimit,
    ))]
pub async fn create_yearly(
    State(state): State<AppState>,
    me: Authed,
    Input(body): Input<YearlyBody>,
) -> Result<Json<YearlyCreated>, Error> {
    let title = body.title.parse("title")?;
    let CompleteBy(by) = body.complete_by.parse("completeBy")?;
    let goal = goals::yearly_create(state.db(), &me.user_id(), title, by).await?;
    let created = goal_links::YearlyWithWeekly {
        goal,
        weekly: Vec::new(),
    };
    Ok(Json(YearlyCreated {
        goal: (&created).into(),
        message: "Yearly goal created".to_owned(),
    }))
}

/// Delete a yearly goal; the weekly goals it held stay, in no yearly goal.
#[utoipa::path(delete, path = "/goals/yearly/{goal_id}", tag = "goals", security(("bearer" = [])),
    params(("goal_id" = String, Path, description = "yearlyGoalId", pattern = r"^[0-9a-fA-F]{24}$")),
    responses(
        (status = 200, description = "REMOVED", body = CodeMessage),
        NoSuchGoal,
    ))]
pub async fn delete_yearly(
    State(state): State<AppState>,
    me: Authed,
    Path(goal_id): Path<String>,
) -> Result<Json<CodeMessage>, Error> {
    let id = GoalId::parse_as("goal_id", &goal_id)?;
    goal_links::delete_yearly(state.db(), &me.user_id(), &id).await?;
    Ok(CodeMessage::new("REMOVED", "Yearly goal deleted"))
}

/// A yearly goal and one of the user's weekly goals, named in the path.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct LinkPath {
    /// The yearly goal's `_id`.
    #[param(pattern = r"^[0-9a-fA-F]{24}$")]
    goal_id: String,
    /// The weekly goal's `_id`.
    #[param(pattern = r"^[0-9a-fA-F]{24}$")]
    weekly_goal_id: String,
}

impl LinkPath {
    fn ids(&self) -> Result<(GoalId, GoalId), Error> {
        Ok((
            GoalId::parse_as("goal_id", &self.goal_id)?,
            GoalId::parse_as("weekly_goal_id", &self.weekly_goal_id)?,
        ))
    }
}

/// Put one of the user's weekly goals into this yearly goal (out of any
/// other it was in); answers the yearly goal. Already there changes nothing.
#[utoipa::path(put, path = "/goals/yearly/{goal_id}/weekly/{weekly_goal_id}", tag = "goals", security(("bearer" = [])),
    params(LinkPath),
    responses(
        (status = 200, body = views::YearlyGoal),
        (status = 400, description = "INVALID_ID: not a goal id", body = ErrorBody),
        (status = 404, description = "No such yearly or weekly goal of this user", body = ErrorBody),
    ))]
pub async fn link_weekly(
    State(state): State<AppState>,
    me: Authed,
    Path(path): Path<LinkPath>,
) -> Result<Json<views::YearlyGoal>, Error> {
    let (yearly, weekly) = path.ids()?;
    let goal = goal_links::link(state.db(), &me.user_id(), &yearly, &weekly).await?;
    Ok(Json((&goal).into()))
}

/// Take a weekly goal out of this yearly goal; answers the yearly goal.
#[utoipa::path(delete, path = "/goals/yearly/{goal_id}/weekly/{weekly_goal_id}", tag = "goals", security(("bearer" = [])),
    params(LinkPath),
    responses(
        (status = 200, body = views::YearlyGoal),
        (status = 400, description = "INVALID_ID: not a goal id", body = ErrorBody),
        (status = 404, description = "No such yearly or weekly goal of this user, or the weekly goal is not in this one", body = ErrorBody),
    ))]
pub async fn unlink_weekly(
    State(state): State<AppState>,
    me: Authed,
    Path(path): Path<LinkPath>,
) -> Result<Json<views::YearlyGoal>, Error> {
    let (yearly, weekly) = path.ids()?;
    let goal = goal_links::unlink(state.db(), &me.user_id(), &yearly, &weekly).await?;
    Ok(Json((&goal).into()))
}
