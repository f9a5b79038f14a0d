//! Weekly and yearly goals, each owned by one user. Another user's goal is
//! indistinguishable from a missing one.

use chrono::{DateTime, Utc};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, ExprTrait, QueryFilter, QueryOrder, QuerySelect,
    Set,
};

use super::fields::Title;
use crate::entity::{weekly_goal, yearly_goal};
use crate::error::Error;
use crate::id::new_id;
use crate::state::AppState;

/// Goals of one kind a user may hold.
pub const MAX_GOALS: u64 = 1000;

fn limit_reached() -> Error {
    Error::conflict(
        "GOAL_LIMIT_REACHED",
        format!("At most {MAX_GOALS} goals of each kind; delete some first"),
    )
}

pub async fn weekly_list(
    state: &AppState,
    user_id: &str,
) -> Result<Vec<weekly_goal::Model>, Error> {
    Ok(weekly_goal::Entity::find()
        .filter(weekly_goal::Column::UserId.eq(user_id))
        .order_by_desc(weekly_goal::Column::CreatedAt)
        .order_by_desc(weekly_goal::Column::Id)
        .all(state.db().read())
        .await?)
}

pub async fn weekly_get(
    state: &AppState,
    user_id: &str,
    id: &str,
) -> Result<weekly_goal::Model, Error> {
    weekly_goal::Entity::find_by_id(id)
        .filter(weekly_goal::Column::UserId.eq(user_id))
        .one(state.db().read())
        .await?
        .ok_or_else(|| Error::not_found("Goal"))
}

pub async fn weekly_create(
    state: &AppState,
    user_id: &str,
    title: Title,
) -> Result<weekly_goal::Model, Error> {
    let db = state.db();
    // Whether a MAX_GOALS-th goal exists: bounded work, unlike COUNT(*).
    let at_limit = weekly_goal::Entity::find()
        .filter(weekly_goal::Column::UserId.eq(user_id))
        .offset(MAX_GOALS - 1)
        .limit(1)
        .one(db.read())
        .await?;
    if at_limit.is_some() {
        return Err(limit_reached());
    }
    let now = Utc::now();
    Ok(weekly_goal::ActiveModel {
        id: Set(new_id()),
        user_id: Set(user_id.to_owned()),
        title: Set(title.into_inner()),
        is_completed: Set(false),
        revision: Set(0),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(db.write())
    .await?)
}

/// Sets `isCompleted`; setting the value it already has changes nothing.
pub async fn weekly_set_completed(
    state: &AppState,
    user_id: &str,
    id: &str,
    done: bool,
) -> Result<(), Error> {
    let db = state.db();
    let res = weekly_goal::Entity::update_many()
        .col_expr(weekly_goal::Column::IsCompleted, Expr::value(done))
        .col_expr(
            weekly_goal::Column::Revision,
            Expr::col(weekly_goal::Column::Revision).add(1),
        )
        .col_expr(weekly_goal::Column::UpdatedAt, Expr::value(Utc::now()))
        .filter(weekly_goal::Column::Id.eq(id))
        .filter(weekly_goal::Column::UserId.eq(user_id))
        .filter(weekly_goal::Column::IsCompleted.ne(done))
        .exec(db.write())
        .await?;
    if res.rows_affected == 0 {
        // Either already in that state, or not this user's goal.
        weekly_get(state, user_id, id).await?;
    }
    Ok(())
}

pub async fn weekly_delete(state: &AppState, user_id: &str, id: &str) -> Result<(), Error> {
    let res = weekly_goal::Entity::delete_many()
        .filter(weekly_goal::Column::Id.eq(id))
        .filter(weekly_goal::Column::UserId.eq(user_id))
        .exec(state.db().write())
        .await?;
    if res.rows_affected == 0 {
        return Err(Error::not_found("Goal"));
    }
    Ok(())
}

pub async fn yearly_list(
    state: &AppState,
    user_id: &str,
) -> Result<Vec<yearly_goal::Model>, Error> {
    Ok(yearly_goal::Entity::find()
        .filter(yearly_goal::Column::UserId.eq(user_id))
        .order_by_desc(yearly_goal::Column::CreatedAt)
        .order_by_desc(yearly_goal::Column::Id)
        .all(state.db().read())
        .await?)
}

pub async fn yearly_get(
    state: &AppState,
    user_id: &str,
    id: &str,
) -> Result<yearly_goal::Model, Error> {
    yearly_goal::Entity::find_by_id(id)
        .filter(yearly_goal::Column::UserId.eq(user_id))
        .one(state.db().read())
        .await?
        .ok_or_else(|| Error::not_found("Goal"))
}

pub async fn yearly_create(
    state: &AppState,
    user_id: &str,
    title: Title,
    complete_by: DateTime<Utc>,
) -> Result<yearly_goal::Model, Error> {
    let db = state.db();
    let at_limit = yearly_goal::Entity::find()
        .filter(yearly_goal::Column::UserId.eq(user_id))
        .offset(MAX_GOALS - 1)
        .limit(1)
        .one(db.read())
        .await?;
    if at_limit.is_some() {
        return Err(limit_reached());
    }
    let now = Utc::now();
    Ok(yearly_goal::ActiveModel {
        id: Set(new_id()),
        user_id: Set(user_id.to_owned()),
        title: Set(title.into_inner()),
        is_completed: Set(false),
        complete_by: Set(complete_by),
        weekly: Set("[]".to_owned()),
        revision: Set(0),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(db.write())
    .await?)
}

pub async fn yearly_delete(state: &AppState, user_id: &str, id: &str) -> Result<(), Error> {
    let res = yearly_goal::Entity::delete_many()
        .filter(yearly_goal::Column::Id.eq(id))
        .filter(yearly_goal::Column::UserId.eq(user_id))
        .exec(state.db().write())
        .await?;
    if res.rows_affected == 0 {
        return Err(Error::not_found("Goal"));
    }
    Ok(())
}
