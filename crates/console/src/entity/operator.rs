use keel_platform::sea_orm::entity::prelude::*;

/// Someone who may sign in to the console.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "keel_operators")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub name: String,
    pub name_key: String,
    pub password_hash: String,
    /// The TOTP secret, sealed: never shown again after it was made.
    pub totp_secret: String,
    /// The last TOTP time step accepted: a code works once.
    pub totp_last_step: i64,
    /// Role names separated by spaces (`users jobs`).
    pub roles: String,
    pub disabled_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
