use keel_platform::sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "accounts_passkeys")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub user_id: String,
    /// The WebAuthn user handle (a random UUID, the same for all of a
    /// user's passkeys): what a discoverable sign-in names the user by.
    pub user_handle: String,
    /// The credential id, base64url without padding.
    pub credential_id: String,
    /// The public key, its signature counter and flags (webauthn-rs's
    /// `Passkey`, as JSON).
    pub credential: String,
    pub name: String,
    /// The highest signature counter a sign-in showed (0: none yet, or an
    /// authenticator that keeps no counter).
    pub sign_count: i64,
    pub created_at: DateTimeUtc,
    pub last_used_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
