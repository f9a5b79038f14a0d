//! New weekly goals are group-committed: one transaction (and one commit,
//! one fsync on PostgreSQL) for every goal waiting, instead of one each.
//! The 1000-goal limit is checked inside that transaction, counting the
//! goals of the same batch, so one node never lets a user past it.

use std::collections::HashMap;

use chrono::Utc;
use keel_platform::batch::Batcher;
use keel_platform::db::Db;
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel, PaginatorTrait, QueryFilter,
    QuerySelect,
};
use keel_platform::tasks::Tasks;

use super::goals::MAX_GOALS;
use crate::entity::weekly_goal;
use crate::id::new_id;

/// A weekly goal to create.
pub struct NewWeekly {
    pub user_id: String,
    pub title: String,
}

/// What became of it.
pub enum Created {
    Goal(weekly_goal::Model),
    LimitReached,
}

pub type WeeklyWriter = Batcher<NewWeekly, Created>;

pub fn start(db: Db, tasks: &Tasks) -> WeeklyWriter {
    Batcher::start(tasks, "accounts weekly goals", 256, move |items| {
        let db = db.clone();
        async move { write(&db, items).await }
    })
}

/// How many more goals the user may hold (counting at most `MAX_GOALS`).
async fn room<C: ConnectionTrait>(conn: &C, user_id: &str) -> Result<u64, DbErr> {
    let held = weekly_goal::Entity::find()
        .filter(weekly_goal::Column::UserId.eq(user_id))
        .limit(MAX_GOALS)
        .count(conn)
        .await?;
    Ok(MAX_GOALS.saturating_sub(held))
}

async fn write(db: &Db, items: Vec<NewWeekly>) -> Result<Vec<Created>, DbErr> {
    let txn = db.begin_write().await?;
    let mut left: HashMap<String, u64> = HashMap::new();
    let mut rows = Vec::with_capacity(items.len());
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let room_left = match left.get(&item.user_id) {
            Some(n) => *n,
            None => room(&txn, &item.user_id).await?,
        };
        if room_left == 0 {
            left.insert(item.user_id, 0);
            out.push(Created::LimitReached);
            continue;
        }
        left.insert(item.user_id.clone(), room_left - 1);
        let now = Utc::now();
        let goal = weekly_goal::Model {
            id: new_id(),
            user_id: item.user_id,
            title: item.title,
            is_completed: false,
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
