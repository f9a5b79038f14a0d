use keel_platform::sea_orm::entity::prelude::*;

/// A registered device; its push token is its credential.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "svc_push_devices")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub push_token: String,
    /// `ios` or `android`
    pub device_type: String,
    pub device_model: Option<String>,
    pub os_version: Option<String>,
    pub app_version: Option<String>,
    pub locale: Option<String>,
    pub timezone: Option<String>,
    pub user_label: Option<String>,
    pub active: bool,
    /// `unregistered` (DELETE /register) or `DeviceNotRegistered` (Expo).
    pub inactive_reason: Option<String>,
    /// The App Check app id that registered it (`import` for imported ones).
    pub app_id: String,
    pub registered_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
