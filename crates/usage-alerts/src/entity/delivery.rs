use keel_platform::sea_orm::entity::prelude::*;

/// The push of one alert to one device.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "ua_deliveries")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub alert_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub device_token: String,
    pub platform: super::kinds::Platform,
    pub sandbox: bool,
    pub status: DeliveryStatus,
    pub reason: Option<String>,
    pub apns_id: Option<String>,
    pub updated_at: DateTimeUtc,
}

/// Where one push of an alert stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(16))")]
pub enum DeliveryStatus {
    #[sea_orm(string_value = "pending")]
    Pending,
    #[sea_orm(string_value = "delivered")]
    Delivered,
    #[sea_orm(string_value = "not_delivered")]
    NotDelivered,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
