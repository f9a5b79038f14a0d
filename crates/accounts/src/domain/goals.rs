//! Weekly and yearly goals, each owned by one user. Another user's goal is
//! indistinguishable from a missing one.

use chrono::{DateTime, Utc};
use keel_platform::batch::BatchError;
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter,
    QueryOrder, QuerySelect, Set, TryIntoModel, UpdateMany,
};

use super::fields::Title;
use super::goal_writer::{Created, NewWeekly, WeeklyWriter};
use crate::entity::{weekly_goal, yearly_goal};
use crate::id::{GoalId, UserId};

pub use super::goal_writer::MAX_GOALS;

/// Why a goal could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum GoalError {
    /// None of this user's goals has the id.
    #[error("Goal not found")]
    NotFound,
    #[error("At most {MAX_GOALS} goals of each kind; delete some first")]
    LimitReached,
    /// None of this user's yearly goals has the id.
    #[error("Yearly goal not found")]
    NoSuchYearly,
    /// None of this user's weekly goals has the id.
    #[error("Weekly goal not found")]
    NoSuchWeekly,
    /// The weekly goal is not in that yearly goal.
    #[error("The weekly goal is not in this yearly goal")]
    NotLinked,
    #[error(transparent)]
    Writer(#[from] BatchError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What weekly and yearly goals share: an id, an owner, a creation time.
pub trait Goal: EntityTrait<ActiveModel: TryIntoModel<Self::Model>> {
    const ID: Self::Column;
    const USER_ID: Self::Column;
    const CREATED_AT: Self::Column;
    const UPDATED_AT: Self::Column;
    const REVISION: Self::Column;
}

/// An update of the user's goal `id` that counts as a change (`__v` and
/// `updatedAt`); the caller adds what changes.
pub fn change<G: Goal>(user_id: &UserId, id: &str) -> UpdateMany<G> {
    G::update_many()
        .col_expr(G::REVISION, Expr::col(G::REVISION).add(1))
        .col_expr(G::UPDATED_AT, Expr::value(Utc::now()))
        .filter(G::ID.eq(id))
        .filter(G::USER_ID.eq(user_id.as_str()))
}

impl Goal for weekly_goal::Entity {
    const ID: weekly_goal::Column = weekly_goal::Column::Id;
    const USER_ID: weekly_goal::Column = weekly_goal::Column::UserId;
    const CREATED_AT: weekly_goal::Column = weekly_goal::Column::CreatedAt;
    const UPDATED_AT: weekly_goal::Column = weekly_goal::Column::UpdatedAt;
    const REVISION: weekly_goal::Column = weekly_goal::Column::Revision;
}

impl Goal for yearly_goal::Entity {
    const ID: yearly_goal::Column = yearly_goal::Column::Id;
    const USER_ID: yearly_goal::Column = yearly_goal::Column::UserId;
    const CREATED_AT: yearly_goal::Column = yearly_goal::Column::CreatedAt;
    const UPDATED_AT: yearly_goal::Column = yearly_goal::Column::UpdatedAt;
    const REVISION: yearly_goal::Column = yearly_goal::Column::Revision;
}

/// The user's goals of one kind, newest first.
pub async fn list<G: Goal>(db: &Db, user_id: &UserId) -> Result<Vec<G::Model>, GoalError> {
    // At most MAX_GOALS rows, by an index: a short read.
    Ok(db
        .all_short(
            G::find()
                .filter(G::USER_ID.eq(user_id.as_str()))
                .order_by_desc(G::CREATED_AT)
                .order_by_desc(G::ID),
        )
        .await?)
}

/// One of the user's goals (another user's is "not found" too).
pub async fn get<G: Goal>(db: &Db, user_id: &UserId, id: &GoalId) -> Result<G::Model, GoalError> {
    db.one_short(
        G::find()
            .filter(G::ID.eq(id.as_str()))
            .filter(G::USER_ID.eq(user_id.as_str())),
    )
    .await?
    .ok_or(GoalError::NotFound)
}

/// One of the user's goals, read on `conn` (a transaction).
pub async fn get_in<G: Goal, C: ConnectionTrait>(
    conn: &C,
    user_id: &UserId,
    id: &GoalId,
) -> Result<G::Model, GoalError> {
    G::find()
        .filter(G::ID.eq(id.as_str()))
        .filter(G::USER_ID.eq(user_id.as_str()))
        .one(conn)
        .await?
        .ok_or(GoalError::NotFound)
}

/// Refuses a new goal when the user holds `MAX_GOALS` of the kind already:
/// whether a MAX_GOALS-th exists is bounded work, unlike COUNT(*).
async fn check_room<G: Goal>(db: &Db, user_id: &UserId) -> Result<(), GoalError> {
    let at_limit = G::find()
        .filter(G::USER_ID.eq(user_id.as_str()))
        .offset(MAX_GOALS - 1)
        .limit(1)
        .one(db.read())
        .await?;
    match at_limit {
        Some(_) => Err(GoalError::LimitReached),
        None => Ok(()),
    }
}

/// Creates a weekly goal through the group-committing writer, in the
/// user's yearly goal `yearly` when given.
pub async fn weekly_create(
    writer: &WeeklyWriter,
    user_id: &UserId,
    title: Title,
    yearly: Option<GoalId>,
) -> Result<weekly_goal::Model, GoalError> {
    let created = writer
        .submit(NewWeekly {
            user_id: user_id.as_str().to_owned(),
            title: title.into_string(),
            yearly_goal_id: yearly.map(GoalId::into_string),
        })
        .await?;
    match created {
        Created::Goal(goal) => Ok(goal),
        Created::LimitReached => Err(GoalError::LimitReached),
        Created::NoSuchYearly => Err(GoalError::NoSuchYearly),
    }
}

/// Sets `isCompleted`; setting the value it already has changes nothing.
pub async fn weekly_set_completed(
    db: &Db,
    user_id: &UserId,
    id: &GoalId,
    done: bool,
) -> Result<(), GoalError> {
    let res = change::<weekly_goal::Entity>(user_id, id.as_str())
        .col_expr(weekly_goal::Column::IsCompleted, Expr::value(done))
        .filter(weekly_goal::Column::IsCompleted.ne(done))
        .exec(db.write())
        .await?;
    if res.rows_affected == 0 {
        // Either already in that state, or not this user's goal.
        get::<weekly_goal::Entity>(db, user_id, id).await?;
    }
    Ok(())
}

pub async fn yearly_create(
    db: &Db,
    user_id: &UserId,
    title: Title,
    complete_by: DateTime<Utc>,
) -> Result<yearly_goal::Model, GoalError> {
    check_room::<yearly_goal::Entity>(db, user_id).await?;
    let now = Utc::now();
    Ok(yearly_goal::ActiveModel {
        id: Set(GoalId::generate().into_string()),
        user_id: Set(user_id.as_str().to_owned()),
        title: Set(title.into_string()),
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
