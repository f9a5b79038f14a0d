use keel_platform::sea_orm::entity::prelude::*;

/// The channel: one row (`id` 1).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "channel_config")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: i32,
    pub title: String,
    pub description: String,
    /// `[{"label", "url"}]` as JSON.
    pub social_links: String,
    /// Set at provisioning.
    pub stream_call_id: Option<String>,
    pub chat_channel_cid: Option<String>,
    pub rtmps_url: Option<String>,
    /// Set while the provider reports the stream live.
    pub live_started_at: Option<DateTimeUtc>,
    /// The open `stream_sessions` row while live.
    pub live_session_id: Option<String>,
    /// The latest viewer count the provider reported.
    pub viewer_count: i64,
    /// The logo's content hash (`channel_assets`).
    pub logo_hash: Option<String>,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// The one channel's id.
pub const ID: i32 = 1;
