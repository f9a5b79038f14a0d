use keel_platform::sea_orm::entity::prelude::*;

/// A user's totals for one UTC day, updated with every event.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "ua_daily_totals")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: String,
    /// `YYYY-MM-DD` (UTC)
    #[sea_orm(primary_key, auto_increment = false)]
    pub day: String,
    pub cost_usd: f64,
    /// Input + output + cache read + cache write tokens.
    pub tokens: i64,
    /// Distinct session ids.
    pub sessions: i64,
    pub events: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
