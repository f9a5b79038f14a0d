//! `/goals/*`: weekly and yearly goals.

use axum::extract::{Path, State};
use keel_platform::http::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::Authed;
use crate::domain::fields::{Title, parse_complete_by, required};
use crate::domain::goals;
use crate::entity::{weekly_goal, yearly_goal};
use crate::error::Error;
use crate::id::GoalId;
use crate::input::Input;
use crate::routes::failures::*;
use crate::state::AppState;
use crate::views::{self, CodeMessage};

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
    let id = GoalId::parse("goal_id", &goal_id)?;
    Ok(Json(
        (&goals::get::<weekly_goal::Entity>(state.db(), &me.user_id(), &id).await?).into(),
    ))
}

#[derive(Deserialize, ToSchema)]
pub struct WeeklyBody {
    /// 1 to 200 characters, not blank (kept trimmed).
    #[schema(value_type = String, required = true, max_length = 200, pattern = r"\S")]
    title: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct WeeklyCreated {
    code: u16,
    goal: views::WeeklyGoal,
    message: String,
}

/// Create a weekly goal (`isCompleted` false).
#[utoipa::path(post, path = "/goals/weekly", tag = "goals", security(("bearer" = [])),
    request_body(content((WeeklyBody = "application/x-www-form-urlencoded"), (WeeklyBody = "application/json"))),
    responses(
        (status = 200, body = WeeklyCreated),
        Invalid,
        GoalLimit,
    ))]
pub async fn create_weekly(
    State(state): State<AppState>,
    me: Authed,
    Input(body): Input<WeeklyBody>,
) -> Result<Json<WeeklyCreated>, Error> {
    let title = Title::parse(&required(body.title, "title")?)?;
    let goal = goals::weekly_create(&state.weekly_goals, &me.user_id(), title).await?;
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
    let id = GoalId::parse("goal_id", &goal_id)?;
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
    let id = GoalId::parse("goal_id", &goal_id)?;
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

/// Delete a weekly goal.
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
    let id = GoalId::parse("goal_id", &goal_id)?;
    goals::delete::<weekly_goal::Entity>(state.db(), &me.user_id(), &id).await?;
    Ok(Json(NumberCodeMessage {
        code: 200,
        message: "Weekly goal deleted".to_owned(),
    }))
}

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
    let list = goals::list::<yearly_goal::Entity>(state.db(), &me.user_id()).await?;
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
    let id = GoalId::parse("goal_id", &goal_id)?;
    Ok(Json(
        (&goals::get::<yearly_goal::Entity>(state.db(), &me.user_id(), &id).await?).into(),
    ))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct YearlyBody {
    /// 1 to 200 characters, not blank (kept trimmed).
    #[schema(value_type = String, required = true, max_length = 200, pattern = r"\S")]
    title: Option<String>,
    /// A real calendar date written `MM/DD/YYYY` (one-digit month and day
    /// allowed); the pattern spells out which dates exist.
    #[schema(schema_with = complete_by_schema, required = true)]
    complete_by: Option<String>,
}

fn complete_by_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(COMPLETE_BY))
        .build()
}

/// The dates `parse_complete_by` accepts: months of 31 and 30 days, February
/// to the 28th, and the 29th in leap years (every fourth year, centuries
/// only when divisible by 400).
const COMPLETE_BY: &str = concat!(
    r"^(?:(?:0?[13578]|1[02])/(?:0?[1-9]|[12][0-9]|3[01])/[0-9]{4}",
    r"|(?:0?[469]|11)/(?:0?[1-9]|[12][0-9]|30)/[0-9]{4}",
    r"|0?2/(?:0?[1-9]|1[0-9]|2[0-8])/[0-9]{4}",
    r"|0?2/29/(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00))$"
);

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
    let title = Title::parse(&required(body.title, "title")?)?;
    let by = parse_complete_by(&required(body.complete_by, "completeBy")?)?;
    let goal = goals::yearly_create(state.db(), &me.user_id(), title, by).await?;
    Ok(Json(YearlyCreated {
        goal: (&goal).into(),
        message: "Yearly goal created".to_owned(),
    }))
}

/// Delete a yearly goal.
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
    let id = GoalId::parse("goal_id", &goal_id)?;
    goals::delete::<yearly_goal::Entity>(state.db(), &me.user_id(), &id).await?;
    Ok(CodeMessage::new("REMOVED", "Yearly goal deleted"))
}
