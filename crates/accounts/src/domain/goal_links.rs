//! Yearly goals that hold weekly goals: a weekly goal belongs to at most one
//! of its user's yearly goals (`yearly_goal_id`). Linking, unlinking and
//! deleting count as changes of both goals concerned (`__v`).

use std::collections::HashMap;

use chrono::Utc;
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, ExprTrait, QueryFilter, QueryOrder,
};

use super::goals::{self, GoalError};
use crate::entity::{weekly_goal, yearly_goal};
use crate::id::{GoalId, UserId};

/// A yearly goal with the weekly goals it holds, newest first.
pub struct YearlyWithWeekly {
    pub goal: yearly_goal::Model,
    pub weekly: Vec<weekly_goal::Model>,
}

/// The user's yearly goals, newest first, each with its weekly goals.
pub async fn yearly_list(db: &Db, user_id: &UserId) -> Result<Vec<YearlyWithWeekly>, GoalError> {
    let yearly = goals::list::<yearly_goal::Entity>(db, user_id).await?;
    let linked = weekly_goal::Entity::find()
        .filter(weekly_goal::Column::UserId.eq(user_id.as_str()))
        .filter(weekly_goal::Column::YearlyGoalId.is_not_null())
        .order_by_desc(weekly_goal::Column::CreatedAt)
        .order_by_desc(weekly_goal::Column::Id);
    let mut by_yearly: HashMap<String, Vec<weekly_goal::Model>> = HashMap::new();
    for w in db.all_short(linked).await? {
        if let Some(y) = w.yearly_goal_id.clone() {
            by_yearly.entry(y).or_default().push(w);
        }
    }
    Ok(yearly
        .into_iter()
        .map(|goal| YearlyWithWeekly {
            weekly: by_yearly.remove(&goal.id).unwrap_or_default(),
            goal,
        })
        .collect())
}

/// One of the user's yearly goals with its weekly goals.
pub async fn yearly_get(
    db: &Db,
    user_id: &UserId,
    id: &GoalId,
) -> Result<YearlyWithWeekly, GoalError> {
    let goal = goals::get::<yearly_goal::Entity>(db, user_id, id).await?;
    let weekly = db
        .all_short(
            weekly_goal::Entity::find()
                .filter(weekly_goal::Column::UserId.eq(user_id.as_str()))
                .filter(weekly_goal::Column::YearlyGoalId.eq(id.as_str()))
                .order_by_desc(weekly_goal::Column::CreatedAt)
                .order_by_desc(weekly_goal::Column::Id),
        )
        .await?;
    Ok(YearlyWithWeekly { goal, weekly })
}

/// Counts a change of the user's yearly goal `id` (its weekly goals changed).
async fn touch_yearly<C: ConnectionTrait>(
    conn: &C,
    user_id: &UserId,
    id: &str,
) -> Result<u64, GoalError> {
    let res = goals::change::<yearly_goal::Entity>(user_id, id)
        .exec(conn)
        .await?;
    Ok(res.rows_affected)
}

/// Sets the yearly goal of the user's weekly goal `weekly` (`None`: none),
/// counting a change of the weekly goal; its yearly goal before.
async fn set_yearly<C: ConnectionTrait>(
    conn: &C,
    user_id: &UserId,
    weekly: &GoalId,
    yearly: Option<&str>,
) -> Result<Option<String>, GoalError> {
    let current = weekly_goal::Entity::find_by_id(weekly.as_str())
        .filter(weekly_goal::Column::UserId.eq(user_id.as_str()))
        .one(conn)
        .await?
        .ok_or(GoalError::NoSuchWeekly)?;
    if current.yearly_goal_id.as_deref() != yearly {
        goals::change::<weekly_goal::Entity>(user_id, weekly.as_str())
            .col_expr(weekly_goal::Column::YearlyGoalId, Expr::value(yearly))
            .exec(conn)
            .await?;
    }
    Ok(current.yearly_goal_id)
}

/// The user's yearly goal `id` exists (read in the transaction).
async fn yearly_exists<C: ConnectionTrait>(
    conn: &C,
    user_id: &UserId,
    id: &GoalId,
) -> Result<(), GoalError> {
    match goals::get_in::<yearly_goal::Entity, _>(conn, user_id, id).await {
        Ok(_) => Ok(()),
        Err(GoalError::NotFound) => Err(GoalError::NoSuchYearly),
        Err(other) => Err(other),
    }
}

/// Puts the user's weekly goal into the user's yearly goal (out of the one
/// it was in, if another); already there changes nothing.
pub async fn link(
    db: &Db,
    user_id: &UserId,
    yearly: &GoalId,
    weekly: &GoalId,
) -> Result<YearlyWithWeekly, GoalError> {
    let txn = db.begin_write().await?;
    yearly_exists(&txn, user_id, yearly).await?;
    let before = set_yearly(&txn, user_id, weekly, Some(yearly.as_str())).await?;
    if before.as_deref() != Some(yearly.as_str()) {
        touch_yearly(&txn, user_id, yearly.as_str()).await?;
        if let Some(old) = before {
            touch_yearly(&txn, user_id, &old).await?;
        }
    }
    txn.commit().await?;
    yearly_get(db, user_id, yearly).await
}

/// Takes the user's weekly goal out of the user's yearly goal.
pub async fn unlink(
    db: &Db,
    user_id: &UserId,
    yearly: &GoalId,
    weekly: &GoalId,
) -> Result<YearlyWithWeekly, GoalError> {
    let txn = db.begin_write().await?;
    yearly_exists(&txn, user_id, yearly).await?;
    let linked = weekly_goal::Entity::find_by_id(weekly.as_str())
        .filter(weekly_goal::Column::UserId.eq(user_id.as_str()))
        .one(&txn)
        .await?
        .ok_or(GoalError::NoSuchWeekly)?;
    if linked.yearly_goal_id.as_deref() != Some(yearly.as_str()) {
        return Err(GoalError::NotLinked);
    }
    set_yearly(&txn, user_id, weekly, None).await?;
    touch_yearly(&txn, user_id, yearly.as_str()).await?;
    txn.commit().await?;
    yearly_get(db, user_id, yearly).await
}

/// Deletes the user's weekly goal; the yearly goal that held it changes.
pub async fn delete_weekly(db: &Db, user_id: &UserId, id: &GoalId) -> Result<(), GoalError> {
    let txn = db.begin_write().await?;
    let goal = goals::get_in::<weekly_goal::Entity, _>(&txn, user_id, id).await?;
    weekly_goal::Entity::delete_by_id(goal.id.as_str())
        .exec(&txn)
        .await?;
    if let Some(yearly) = goal.yearly_goal_id {
        touch_yearly(&txn, user_id, &yearly).await?;
    }
    txn.commit().await?;
    Ok(())
}

/// Deletes the user's yearly goal; the weekly goals it held stay, in no
/// yearly goal (each counted as changed).
pub async fn delete_yearly(db: &Db, user_id: &UserId, id: &GoalId) -> Result<(), GoalError> {
    let txn = db.begin_write().await?;
    weekly_goal::Entity::update_many()
        .col_expr(
            weekly_goal::Column::YearlyGoalId,
            Expr::value(Option::<String>::None),
        )
        .col_expr(
            weekly_goal::Column::Revision,
            Expr::col(weekly_goal::Column::Revision).add(1),
        )
        .col_expr(weekly_goal::Column::UpdatedAt, Expr::value(Utc::now()))
        .filter(weekly_goal::Column::UserId.eq(user_id.as_str()))
        .filter(weekly_goal::Column::YearlyGoalId.eq(id.as_str()))
        .exec(&txn)
        .await?;
    let res = yearly_goal::Entity::delete_many()
        .filter(yearly_goal::Column::Id.eq(id.as_str()))
        .filter(yearly_goal::Column::UserId.eq(user_id.as_str()))
        .exec(&txn)
        .await?;
    if res.rows_affected == 0 {
        return Err(GoalError::NotFound);
    }
    txn.commit().await?;
    Ok(())
}
