//! `/goals/weekly*`: weekly goals.

use axum::extract::{Path, State};
use keel_platform::http::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::Authed;
use crate::domain::fields::Title;
use crate::domain::sent::Sent;
use crate::domain::{goal_links, goals};
use crate::entity::weekly_goal;
use crate::error::Error;
use crate::id::GoalId;
use crate::input::Input;
use crate::routes::failures::*;
use crate::state::AppState;
use crate::views;

#[derive(Serialize, ToSchema)]
pub struct WeeklyList {
    /// Always 200.
    code: u16,
    goals: Vec<views::WeeklyGoal>,
}

/// The user's weekly goals, newest first.
#[utoipa::path(get, path = "/goals/weekly", tag = "goals", security(("bearer" = [])),
    responses((status = 200, body = WeeklyList)))]
pub async fn list_weekly(
    State(state): State<AppState>,
    me: Authed,
) -> Result<Json<WeeklyList>, Error> {
    let list = goals::list::<weekly_goal::Entity>(state.db(), &me.user_id()).await?;
    Ok(Json(WeeklyList {
        code: 200,
        goals: list.iter().map(Into::into).collect(),
    }))
}

/// One weekly goal, the object itself.
#[utoipa::path(get, path = "/goals/weekly/{goal_id}", tag = "goals", security(("bearer" = [])),
    params(("goal_id" = String, Path, description = "weeklyGoalId", pattern = r"^[0-9a-fA-F]{24}$")),
    responses(
        (status = 200, body = views::WeeklyGoal),
        NoSuchGoal,
    ))]
pub async fn get_weekly(
    State(state): State<AppState>,
    me: Authed,
    Path(goal_id): Path<String>,
) -> Result<Json<views::WeeklyGoal>, Error> {
    let id = GoalId::parse_as("goal_id", &goal_id)?;
    Ok(Json(
        (&goals::get::<weekly_goal::Entity>(state.db(), &me.user_id(), &id).await?).into(),
    ))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WeeklyBody {
    /// 1 to 200 characters, not blank (kept trimmed).
    title: Sent<Title>,
    /// One of the user's yearly goals to put it in (empty: none).
    #[schema(value_type = String, pattern = r"^(?:[0-9a-fA-F]{24})?$")]
    #[serde(default, deserialize_with = "crate::input::present_string")]
    yearly_goal: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct WeeklyCreated {
    code: u16,
    goal: views::WeeklyGoal,
    message: String,
}

/// Create a weekly goal (`isCompleted` false), in one of the user's yearly
/// goals when `yearlyGoal` names it.
#[utoipa::path(post, path = "/goals/weekly", tag = "goals", security(("bearer" = [])),
    request_body(content((WeeklyBody = "application/x-www-form-urlencoded"), (WeeklyBody = "application/json"))),
    responses(
        (status = 200, body = WeeklyCreated),
        Invalid,
        (status = 404, description = "yearlyGoal names none of this user's yearly goals", body = crate::error::ErrorBody),
        GoalLimit,
    ))]
pub async fn create_weekly(
    State(state): State<AppState>,
    me: Authed,
    Input(body): Input<WeeklyBody>,
) -> Result<Json<WeeklyCreated>, Error> {
    let title = body.title.parse("title")?;
    let yearly = body
        .yearly_goal
        .filter(|y| !y.is_empty())
        .map(|y| GoalId::parse_as("yearlyGoal", &y))
        .transpose()?;
    let goal = goals::weekly_create(&state.weekly_goals, &me.user_id(), title, yearly).await?;
    Ok(Json(WeeklyCreated {
        code: 200,
        goal: (&goal).into(),
        message: "Weekly goal created".to_owned(),
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// `COMPLETED` or `NOT_COMPLETED`.
    code: &'static str,
    is_completed: bool,
}

/// Mark a weekly goal complete (again is fine: nothing changes).
#[utoipa::path(put, path = "/goals/weekly/{goal_id}/complete", tag = "goals", security(("bearer" = [])),
    params(("goal_id" = String, Path, description = "weeklyGoalId", pattern = r"^[0-9a-fA-F]{24}$")),
    responses(
        (status = 200, description = "COMPLETED", body = Completion),
        NoSuchGoal,
    ))]
pub async fn complete_weekly(
    State(state): State<AppState>,
    me: Authed,
    Path(goal_id): Path<String>,
) -> Result<Json<Completion>, Error> {
    let id = GoalId::parse_as("goal_id", &goal_id)?;
    goals::weekly_set_completed(state.db(), &me.user_id(), &id, true).await?;
    Ok(Json(Completion {
        code: "COMPLETED",
        is_completed: true,
    }))
}

/// Mark a weekly goal not complete.
#[utoipa::path(put, path = "/goals/weekly/{goal_id}/not-complete", tag = "goals", security(("bearer" = [])),
    params(("goal_id" = String, Path, description = "weeklyGoalId", pattern = r"^[0-9a-fA-F]{24}$")),
    responses(
        (status = 200, description = "NOT_COMPLETED", body = Completion),
        NoSuchGoal,
    ))]
pub async fn uncomplete_weekly(
    State(state): State<AppState>,
    me: Authed,
    Path(goal_id): Path<String>,
) -> Result<Json<Completion>, Error> {
    let id = GoalId::parse_as("goal_id", &goal_id)?;
    goals::weekly_set_completed(state.db(), &me.user_id(), &id, false).await?;
    Ok(Json(Completion {
        code: "NOT_COMPLETED",
        is_completed: false,
    }))
}

#[derive(Serialize, ToSchema)]
pub struct NumberCodeMessage {
    code: u16,
    message: String,
}

/// Delete a weekly goal (it leaves its yearly goal).
#[utoipa::path(delete, path = "/goals/weekly/{goal_id}", tag = "goals", security(("bearer" = [])),
    params(("goal_id" = String, Path, description = "weeklyGoalId", pattern = r"^[0-9a-fA-F]{24}$")),
    responses(
        (status = 200, body = NumberCodeMessage),
        NoSuchGoal,
    ))]
pub async fn delete_weekly(
    State(state): State<AppState>,
    me: Authed,
    Path(goal_id): Path<String>,
) -> Result<Json<NumberCodeMessage>, Error> {
    let id = GoalId::parse_as("goal_id", &goal_id)?;
    goal_links::delete_weekly(state.db(), &me.user_id(), &id).await?;
    Ok(Json(NumberCodeMessage {
        code: 200,
        message: "Weekly goal deleted".to_owned(),
    }))
}
