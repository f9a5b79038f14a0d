use keel_platform::sea_orm::entity::prelude::*;

/// A stored submission; `field_values` is JSON.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "svc_submissions")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub form_id: String,
    pub field_values: String,
    /// The verified App Check app id.
    pub app_id: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
