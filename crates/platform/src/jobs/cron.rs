//! Cron schedules on the durable job queue, once per tick across every node
//! sharing the database.
//!
//! Each node runs a scheduler task per schedule (in the server's `Tasks`):
//! it sleeps until the next tick of the pattern, then, in one transaction,
//! claims the tick by inserting `(name, tick)` into `keel_cron_ticks` and,
//! if it won the claim, enqueues the schedule's job due at the tick. The
//! primary key makes the claim exactly once however many nodes wake for
//! it; the job queue makes the run durable (retried, resumed after a
//! crash). Ticks missed while every node was down are not replayed: a
//! scheduler only ever looks at the next tick from now.

use std::str::FromStr;

use chrono::{DateTime, Utc};
pub use croner::Cron;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, Set};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{Job, enqueue_unique};
use crate::db::Db;
use crate::tasks::Tasks;

/// A named schedule: a cron pattern (five fields, or six with seconds
/// first) and the job each tick enqueues (made from the tick's time).
#[derive(Debug)]
pub struct Schedule<J> {
    pub name: &'static str,
    pub cron: Cron,
    pub job: fn(DateTime<Utc>) -> J,
}

impl<J> Clone for Schedule<J> {
    fn clone(&self) -> Self {
        Self {
            name: self.name,
            cron: self.cron.clone(),
            job: self.job,
        }
    }
}

/// A pattern that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("not a cron pattern: {0}")]
pub struct BadPattern(String);

/// Parses a cron pattern: `0 */12 * * *`, or with seconds `*/5 * * * * *`.
pub fn parse(pattern: &str) -> Result<Cron, BadPattern> {
    croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Optional)
        .build()
        .parse(pattern)
        .or_else(|_| Cron::from_str(pattern))
        .map_err(|e| BadPattern(format!("{pattern:?}: {e}")))
}

/// The cron pattern variable `name` of `src` (`default` when unset); a
/// bad pattern names the variable.
pub fn var(
    src: &crate::config::Source,
    name: &str,
    default: &str,
) -> Result<Cron, crate::config::ConfigError> {
    parse(&src.string_or(name, default))
        .map_err(|e| crate::config::ConfigError::invalid(name, e.to_string()))
}

impl<J: Job + Sync> Schedule<J> {
    /// Starts this node's scheduler as one of `tasks`.
    pub fn start(self, db: Db, tasks: &Tasks) {
        let token = tasks.token();
        let name = self.name;
        tasks.spawn_restarting(name, move || {
            let (s, db, token) = (self.clone(), db.clone(), token.clone());
            async move { s.run(&db, &token).await }
        });
    }

    async fn run(&self, db: &Db, stop: &CancellationToken) {
        loop {
            let now = Utc::now();
            let Ok(tick) = self.cron.find_next_occurrence(&now, false) else {
                tracing::error!(schedule = self.name, "the pattern has no next tick");
                return stop.cancelled().await;
            };
            let wait = (tick - now).to_std().unwrap_or_default();
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
            // A span of its own: the cause the tick's job links to.
            let span = crate::observe::trace::work(&format!("cron {}", self.name));
            match claim(db, self.name, tick, &(self.job)(tick))
                .instrument(span)
                .await
            {
                Ok(true) => tracing::debug!(schedule = self.name, %tick, "tick claimed"),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(schedule = self.name, %tick, error = %e, "claiming a tick failed")
                }
            }
        }
    }
}

/// Claims `tick` of `name` and enqueues `job` for it; false when another
/// node claimed it first.
pub async fn claim<J: Job>(
    db: &Db,
    name: &str,
    tick: DateTime<Utc>,
    job: &J,
) -> Result<bool, DbErr> {
    let txn = db.begin_write().await?;
    let inserted = entity::Entity::insert(entity::ActiveModel {
        name: Set(name.to_owned()),
        tick: Set(tick),
    })
    .on_conflict(
        OnConflict::columns([entity::Column::Name, entity::Column::Tick])
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(&txn)
    .await?;
    if inserted == 0 {
        return Ok(false);
    }
    let key = format!("cron:{name}:{}", tick.timestamp_millis());
    enqueue_unique(&txn, job, &key, tick).await?;
    // Old claims only guard ticks long past.
    entity::Entity::delete_many()
        .filter(entity::Column::Name.eq(name))
        .filter(entity::Column::Tick.lt(tick - chrono::Duration::days(1)))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(true)
}

/// The `keel_cron_ticks` table.
pub mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "keel_cron_ticks")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub name: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub tick: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_and_six_field_patterns_parse() {
        assert!(parse("0 */12 * * *").is_ok());
        assert!(parse("* * * * *").is_ok());
        assert!(parse("*/2 * * * * *").is_ok());
        assert!(parse("every minute").is_err());
        let every_12h = parse("0 */12 * * *").unwrap_or_else(|e| panic!("{e}"));
        let from = DateTime::parse_from_rfc3339("2026-01-01T05:30:00Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_else(|e| panic!("{e}"));
        let next = every_12h
            .find_next_occurrence(&from, false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(next.to_rfc3339(), "2026-01-01T12:00:00+00:00");
    }
}
