use keel_platform::sea_orm::entity::prelude::*;

/// The session ids seen for a user on a day (to count distinct sessions).
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "ua_day_sessions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub day: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub session_id: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
