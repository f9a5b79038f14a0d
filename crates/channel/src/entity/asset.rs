use keel_platform::sea_orm::entity::prelude::*;

/// An uploaded image (the logo), stored in the database so every node
/// serves it, addressed by the SHA-256 of its bytes.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "channel_assets")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub hash: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
    pub width: i32,
    pub height: i32,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
