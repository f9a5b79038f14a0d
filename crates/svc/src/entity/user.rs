use keel_platform::sea_orm::entity::prelude::*;

/// A host-site user (an administrator, or not).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "svc_users")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub username: String,
    /// argon2id, for cookie login.
    pub password_hash: String,
    /// Space-separated capabilities, e.g. `svc_manage`.
    pub capabilities: String,
    pub created_at: DateTimeUtc,
    /// Set while the user is disabled: refused at every door, sessions
    /// and application passwords kept from working.
    pub disabled_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
