use keel_platform::sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "accounts_passkey_ceremonies")]
pub struct Model {
    /// 32 hex characters, random.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// The signed-in user a registration is for; none for a sign-in.
    pub user_id: Option<String>,
    /// `register` or `sign-in`.
    pub kind: String,
    /// webauthn-rs's ceremony state (the challenge and what it allows), JSON.
    pub state: String,
    pub expires_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
