//! Failed jobs, for an operator: listed with their last error, run again
//! (one more attempt, now) or discarded, one or every one of a kind.

use chrono::Utc;
use sea_orm::ExprTrait;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::entity::{self, Column, Entity};
use crate::db::Db;

/// Failed jobs, newest first: of `kind` when given, at most `limit`.
pub async fn list(db: &Db, kind: Option<&str>, limit: u64) -> Result<Vec<entity::Model>, DbErr> {
    let mut q = Entity::find().filter(Column::Status.eq(entity::FAILED));
    if let Some(kind) = kind {
        q = q.filter(Column::Kind.eq(kind));
    }
    q.order_by_desc(Column::Id)
        .limit(limit)
        .all(db.read())
        .await
}

/// Which failed jobs an action takes.
#[derive(Debug, Clone, Copy)]
pub enum Which<'a> {
    One(i64),
    Kind(&'a str),
}

impl Which<'_> {
    fn filter(self) -> sea_orm::Condition {
        let failed = sea_orm::Condition::all().add(Column::Status.eq(entity::FAILED));
        match self {
            Which::One(id) => failed.add(Column::Id.eq(id)),
            Which::Kind(kind) => failed.add(Column::Kind.eq(kind)),
        }
    }
}

/// Queues the failed jobs again, due now, with one more attempt each; how
/// many. Wakes the worker.
pub async fn retry(db: &Db, which: Which<'_>, wake: &tokio::sync::Notify) -> Result<u64, DbErr> {
    let done = Entity::update_many()
        .col_expr(Column::Status, Expr::value(entity::QUEUED))
        .col_expr(Column::RunAt, Expr::value(Utc::now()))
        .col_expr(
            Column::LockedUntil,
            Expr::value(Option::<chrono::DateTime<Utc>>::None),
        )
        .col_expr(Column::LockedBy, Expr::value(Option::<String>::None))
        .col_expr(Column::MaxAttempts, Expr::col(Column::Attempts).add(1))
        .filter(which.filter())
        .exec(db.write())
        .await?;
    wake.notify_one();
    Ok(done.rows_affected)
}

/// Deletes the failed jobs; how many.
pub async fn discard(db: &Db, which: Which<'_>) -> Result<u64, DbErr> {
    Ok(Entity::delete_many()
        .filter(which.filter())
        .exec(db.write())
        .await?
        .rows_affected)
}
