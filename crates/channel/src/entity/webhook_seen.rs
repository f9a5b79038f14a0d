use keel_platform::sea_orm::entity::prelude::*;

/// A provider webhook delivery already handled (its `X-Webhook-Id`).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "channel_webhooks_seen")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub webhook_id: String,
    pub received_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
