use keel_platform::sea_orm::entity::prelude::*;

/// A registered push device; the token is unique.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "ua_devices")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub device_token: String,
    pub user_id: String,
    pub platform: super::kinds::Platform,
    pub sandbox: bool,
    pub registered_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
