use keel_platform::sea_orm::entity::prelude::*;

/// The emotes one source gave at its last successful fetch.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "emote_sources")]
pub struct Model {
    /// e.g. `7tv-global`, `bttv-channel`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub source: String,
    /// `[{"id", "name", "url"}]` as JSON.
    pub emotes: String,
    pub fetched_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
