use keel_platform::sea_orm::entity::prelude::*;

/// The push of one alert to one device.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "ua_deliveries")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub alert_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub device_token: String,
    pub platform: String,
    pub sandbox: bool,
    /// `pending`, `delivered`, `not_delivered`
    pub status: String,
    pub reason: Option<String>,
    pub apns_id: Option<String>,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
