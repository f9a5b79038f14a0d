use keel_platform::sea_orm::entity::prelude::*;

/// A threshold crossed: at most one per user, UTC day and threshold type.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "ua_alerts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub user_id: String,
    pub day: String,
    pub threshold_type: super::kinds::Kind,
    pub threshold_value: f64,
    /// The day's figure when it crossed.
    pub observed: f64,
    /// Why nothing was sent, when nothing was (no devices).
    pub note: Option<String>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
