use keel_platform::sea_orm::entity::prelude::*;

/// An audited event (the raw token never; its SHA-256).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "svc_audit")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub event: String,
    pub app_id: String,
    pub form_id: Option<String>,
    pub token_hash: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
