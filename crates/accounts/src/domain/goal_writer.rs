//! New weekly goals are group-committed: one transaction (and one commit,
//! one fsync on PostgreSQL) for every goal waiting, instead of one each.
//! The 1000-goal limit is checked inside that transaction, counting the
//! goals of the same batch, so one node never lets a user past it.

use std::collections::{HashMap, HashSet};

use chrono::Utc;
use keel_platform::batch::Batcher;
use keel_platform::db::Db;
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel, QueryFilter, QuerySelect,
};
use keel_platform::tasks::Tasks;

use crate::entity::{weekly_goal, yearly_goal};
use crate::id::GoalId;

/// Goals of one kind a user may hold.
pub const MAX_GOALS: u64 = 1000;

/// A weekly goal to create, perhaps in one of the user's yearly goals.
pub struct NewWeekly {
    pub user_id: String,
    pub title: String,
    pub yearly_goal_id: Option<String>,
}

/// What became of it.
pub enum Created {
    Goal(weekly_goal::Model),
    LimitReached,
    /// The yearly goal named is not one of the user's.
    NoSuchYearly,
}

pub type WeeklyWriter = Batcher<NewWeekly, Created>;

pub fn start(db: Db, tasks: &Tasks) -> WeeklyWriter {
    Batcher::start_with(
        tasks,
        "accounts weekly goals",
        256,
        db,
        |db, items| async move { write(&db, items).await },
    )
}

/// How many more goals each of `users` may hold: one query for the batch
/// (a query per user was a round trip to the writer's thread each, and the
/// batch waited on them in turn).
async fn room<C: ConnectionTrait>(
    conn: &C,
    users: HashSet<&str>,
) -> Result<HashMap<String, u64>, DbErr> {
    let held: Vec<(String, i64)> = weekly_goal::Entity::find()
        .select_only()
        .column(weekly_goal::Column::UserId)
        .column_as(weekly_goal::Column::Id.count(), "held")
        .filter(weekly_goal::Column::UserId.is_in(users.iter().copied()))
        .group_by(weekly_goal::Column::UserId)
        .into_tuple()
        .all(conn)
        .await?;
    let mut left: HashMap<String, u64> = users
        .into_iter()
        .map(|u| (u.to_owned(), MAX_GOALS))
        .collect();
    for (user, n) in held {
        left.insert(
            user,
            MAX_GOALS.saturating_sub(u64::try_from(n).unwrap_or(0)),
        );
    }
    Ok(left)
}

/// Which of the yearly goals the items name exist, as (owner, id): read in
/// the writing transaction, so a yearly goal deleted meanwhile is not
/// linked to.
async fn yearly_present<C: ConnectionTrait>(
    conn: &C,
    items: &[NewWeekly],
) -> Result<HashSet<(String, String)>, DbErr> {
    let ids: Vec<&str> = items
        .iter()
        .filter_map(|i| i.yearly_goal_id.as_deref())
        .collect();
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    let found: Vec<(String, String)> = yearly_goal::Entity::find()
        .select_only()
        .column(yearly_goal::Column::UserId)
        .column(yearly_goal::Column::Id)
        .filter(yearly_goal::Column::Id.is_in(ids))
        .into_tuple()
        .all(conn)
        .await?;
    Ok(found.into_iter().collect())
}

async fn write(db: &Db, items: Vec<NewWeekly>) -> Result<Vec<Created>, DbErr> {
    let txn = db.begin_write().await?;
    let yearly = yearly_present(&txn, &items).await?;
    let users: HashSet<&str> = items.iter().map(|i| i.user_id.as_str()).collect();
    let mut left = room(&txn, users).await?;
    let mut rows = Vec::with_capacity(items.len());
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        if let Some(y) = &item.yearly_goal_id
            && !yearly.contains(&(item.user_id.clone(), y.clone()))
        {
            out.push(Created::NoSuchYearly);
            continue;
        }
        let Some(room_left) = left.get_mut(&item.user_id).filter(|n| **n > 0) else {
            out.push(Created::LimitReached);
            continue;
        };
        *room_left -= 1;
        let now = Utc::now();
        let goal = weekly_goal::Model {
            id: GoalId::generate().into_string(),
            user_id: item.user_id,
            title: item.title,
            is_completed: false,
            yearly_goal_id: item.yearly_goal_id,
            revision: 0,
            created_at: now,
            updated_at: now,
        };
        rows.push(goal.clone().into_active_model());
        out.push(Created::Goal(goal));
    }
    if !rows.is_empty() {
        weekly_goal::Entity::insert_many(rows)
            .exec_without_returning(&txn)
            .await?;
    }
    txn.commit().await?;
    Ok(out)
}
