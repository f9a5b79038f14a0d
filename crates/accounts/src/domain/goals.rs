//! Weekly and yearly goals, each owned by one user. Another user's goal is
//! indistinguishable from a missing one.

use chrono::{DateTime, Utc};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, ExprTrait, QueryFilter, QueryOrder, QuerySelect,
    Set, TryIntoModel,
};

use super::fields::Title;
use super::goal_writer::{Created, NewWeekly};
use crate::entity::{weekly_goal, yearly_goal};
use crate::error::{self, Error};
use crate::id::new_id;
use crate::state::AppState;

pub use super::goal_writer::MAX_GOALS;

fn limit_reached() -> Error {
    Error::conflict(
        "GOAL_LIMIT_REACHED",
        format!("At most {MAX_GOALS} goals of each kind; delete some first"),
    )
}

/// What weekly and yearly goals share: an id, an owner, a creation time.
pub trait Goal: EntityTrait<ActiveModel: TryIntoModel<Self::Model>> {
    const ID: Self::Column;
    const USER_ID: Self::Column;
    const CREATED_AT: Self::Column;
}

impl Goal for weekly_goal::Entity {
    const ID: weekly_goal::Column = weekly_goal::Column::Id;
    const USER_ID: weekly_goal::Column = weekly_goal::Column::UserId;
    const CREATED_AT: weekly_goal::Column = weekly_goal::Column::CreatedAt;
}

impl Goal for yearly_goal::Entity {
    const ID: yearly_goal::Column = yearly_goal::Column::Id;
    const USER_ID: yearly_goal::Column = yearly_goal::Column::UserId;
    const CREATED_AT: yearly_goal::Column = yearly_goal::Column::CreatedAt;
}

/// The user's goals of one kind, newest first.
pub async fn list<G: Goal>(state: &AppState, user_id: &str) -> Result<Vec<G::Model>, Error> {
    // At most MAX_GOALS rows, by an index: a short read.
    Ok(state
        .db()
        .all_short(
            G::find()
                .filter(G::USER_ID.eq(user_id))
                .order_by_desc(G::CREATED_AT)
                .order_by_desc(G::ID),
        )
        .await?)
}

/// One of the user's goals (another user's is "not found" too).
pub async fn get<G: Goal>(state: &AppState, user_id: &str, id: &str) -> Result<G::Model, Error> {
    state
        .db()
        .one_short(
            G::find()
                .filter(G::ID.eq(id))
                .filter(G::USER_ID.eq(user_id)),
        )
        .await?
        .ok_or_else(|| error::not_found("Goal"))
}

/// Refuses a new goal when the user holds `MAX_GOALS` of the kind already:
/// whether a MAX_GOALS-th exists is bounded work, unlike COUNT(*).
async fn check_room<G: Goal>(state: &AppState, user_id: &str) -> Result<(), Error> {
    let at_limit = G::find()
        .filter(G::USER_ID.eq(user_id))
        .offset(MAX_GOALS - 1)
        .limit(1)
        .one(state.db().read())
        .await?;
    match at_limit {
        Some(_) => Err(limit_reached()),
        None => Ok(()),
    }
}

pub async fn delete<G: Goal>(state: &AppState, user_id: &str, id: &str) -> Result<(), Error> {
    let res = G::delete_many()
        .filter(G::ID.eq(id))
        .filter(G::USER_ID.eq(user_id))
        .exec(state.db().write())
        .await?;
    if res.rows_affected == 0 {
        return Err(error::not_found("Goal"));
    }
    Ok(())
}

/// Creates a weekly goal through the group-committing writer.
pub async fn weekly_create(
    state: &AppState,
    user_id: &str,
    title: Title,
) -> Result<weekly_goal::Model, Error> {
    let created = state
        .weekly_goals
        .submit(NewWeekly {
            user_id: user_id.to_owned(),
            title: title.into_inner(),
        })
        .await
        .map_err(Error::internal)?;
    match created {
        Created::Goal(goal) => Ok(goal),
        Created::LimitReached => Err(limit_reached()),
    }
}

/// Sets `isCompleted`; setting the value it already has changes nothing.
pub async fn weekly_set_completed(
    state: &AppState,
    user_id: &str,
    id: &str,
    done: bool,
) -> Result<(), Error> {
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
        .exec(state.db().write())
        .await?;
    if res.rows_affected == 0 {
        // Either already in that state, or not this user's goal.
        get::<weekly_goal::Entity>(state, user_id, id).await?;
    }
    Ok(())
}

pub async fn yearly_create(
    state: &AppState,
    user_id: &str,
    title: Title,
    complete_by: DateTime<Utc>,
) -> Result<yearly_goal::Model, Error> {
    check_room::<yearly_goal::Entity>(state, user_id).await?;
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
    .insert(state.db().write())
    .await?)
}
