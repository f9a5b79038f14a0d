//! The `keel_jobs` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "keel_jobs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub kind: String,
    /// The job's arguments as JSON text.
    pub payload: String,
    /// Enqueuing twice with one key keeps one job.
    pub unique_key: Option<String>,
    /// `queued`, or `failed` once its attempts are spent.
    pub status: String,
    pub attempts: i32,
    pub max_attempts: i32,
    pub run_at: DateTimeUtc,
    pub locked_until: Option<DateTimeUtc>,
    pub locked_by: Option<String>,
    pub last_error: Option<String>,
    pub created_at: DateTimeUtc,
    /// The W3C `traceparent` of the span that enqueued the job (a request,
    /// a cron tick), when traces were on: the job's span links to it.
    pub trace_parent: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

pub const QUEUED: &str = "queued";
pub const FAILED: &str = "failed";
