//! What `channel.getInfo` returns, and the owner's edits of it: the
//! channel's title, description and social links, and the profile.

use chrono::Utc;
use keel_platform::db::Db;
use keel_platform::sea_orm::{ActiveModelTrait, DbErr, EntityTrait, IntoActiveModel, Set};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::panels::{self, Panel};
use super::values::{WebUrl, clearable_url, clearable_url_schema, web_url_schema};
use crate::entity::{channel_config, profile};
use keel_platform::values::{NotBlank, Text, Trimmed};

/// A link to the streamer elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SocialLink {
    /// What to show, e.g. `YouTube`.
    #[schema(inline)]
    pub label: Text<40, NotBlank>,
    #[schema(schema_with = web_url_schema)]
    pub url: WebUrl,
}

/// The streamer's profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub display_name: String,
    pub bio: String,
    pub avatar_url: Option<String>,
    pub location: Option<String>,
}

impl From<profile::Model> for Profile {
    fn from(p: profile::Model) -> Self {
        Self {
            display_name: p.display_name,
            bio: p.bio,
            avatar_url: p.avatar_url,
            location: p.location,
        }
    }
}

/// Everything a viewer's page shows about the channel; no secrets.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChannelInfo {
    pub title: String,
    pub description: String,
    /// Content-addressed; `null` until a logo is uploaded.
    pub logo_url: Option<String>,
    pub profile: Profile,
    /// In display order.
    pub panels: Vec<Panel>,
    pub social_links: Vec<SocialLink>,
    /// Whether the provider's call and chat exist.
    pub provisioned: bool,
    /// The provider's livestream call, `livestream:<id>`.
    pub call_cid: Option<String>,
    /// The chat channel a viewer's chat client joins.
    pub chat_channel_cid: Option<String>,
    /// The provider's public API key (what a viewer's client needs).
    pub stream_api_key: Option<String>,
    /// Where the channel page is.
    pub channel_url: String,
}

/// The logo's URL, by its content hash.
pub fn logo_url(hash: &str) -> String {
    format!("/api/logo/{hash}.png")
}

/// Records the provider's call, chat and ingest address, once both exist
/// at the provider.
pub async fn set_stream(db: &Db, call_id: &str, chat_cid: &str, rtmps: &str) -> Result<(), DbErr> {
    use channel_config::Column as C;
    use keel_platform::sea_orm::sea_query::Expr;
    use keel_platform::sea_orm::{ColumnTrait, QueryFilter};
    channel_config::Entity::update_many()
        .col_expr(C::StreamCallId, Expr::value(call_id))
        .col_expr(C::ChatChannelCid, Expr::value(chat_cid))
        .col_expr(C::RtmpsUrl, Expr::value(rtmps))
        .col_expr(C::UpdatedAt, Expr::value(Utc::now()))
        .filter(C::Id.eq(channel_config::ID))
        .exec(db.write())
        .await?;
    Ok(())
}

/// The channel row.
pub async fn config(db: &Db) -> Result<channel_config::Model, DbErr> {
    channel_config::Entity::find_by_id(channel_config::ID)
        .one(db.read())
        .await?
        .ok_or_else(|| DbErr::RecordNotFound("channel_config".to_owned()))
}

/// Everything `channel.getInfo` answers.
pub async fn info(db: &Db, api_key: Option<&str>, channel_url: &str) -> Result<ChannelInfo, DbErr> {
    let (c, p, panels) = tokio::try_join!(
        config(db),
        async {
            profile::Entity::find_by_id(1)
                .one(db.read())
                .await?
                .ok_or_else(|| DbErr::RecordNotFound("profiles".to_owned()))
        },
        panels::list(db),
    )?;
    let provisioned = c.stream_call_id.is_some() && c.chat_channel_cid.is_some();
    Ok(ChannelInfo {
        title: c.title,
        description: c.description,
        logo_url: c.logo_hash.as_deref().map(logo_url),
        profile: p.into(),
        panels,
        social_links: serde_json::from_str(&c.social_links).unwrap_or_default(),
        provisioned,
        call_cid: c
            .stream_call_id
            .map(|id| format!("{}:{id}", crate::getstream::CALL_TYPE)),
        chat_channel_cid: c.chat_channel_cid,
        stream_api_key: if provisioned {
            api_key.map(str::to_owned)
        } else {
            None
        },
        channel_url: channel_url.to_owned(),
    })
}

/// `channel.update`: only the given fields change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelUpdate {
    #[schema(inline)]
    pub title: Option<Text<120, NotBlank>>,
    #[schema(inline)]
    pub description: Option<Text<2000, Trimmed>>,
    /// At most 10.
    #[schema(max_items = 10)]
    pub social_links: Option<Vec<SocialLink>>,
}

pub async fn update(db: &Db, u: ChannelUpdate) -> Result<(), UpdateError> {
    if u.social_links.as_ref().is_some_and(|l| l.len() > 10) {
        return Err(UpdateError::TooManyLinks);
    }
    let mut row = config(db).await?.into_active_model();
    if let Some(t) = u.title {
        row.title = Set(t.into_string());
    }
    if let Some(d) = u.description {
        row.description = Set(d.into_string());
    }
    if let Some(links) = u.social_links {
        row.social_links =
            Set(serde_json::to_string(&links).map_err(|e| DbErr::Json(e.to_string()))?);
    }
    row.updated_at = Set(Utc::now());
    row.update(db.write()).await?;
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error("socialLinks may hold at most 10 links")]
    TooManyLinks,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// `profile.update`: only the given fields change; `null` clears the
/// optional ones.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileUpdate {
    #[schema(inline)]
    pub display_name: Option<Text<60, Trimmed>>,
    #[schema(inline)]
    pub bio: Option<Text<2000, Trimmed>>,
    /// `null` or `""` removes it.
    #[serde(default, deserialize_with = "clearable_url")]
    #[schema(schema_with = clearable_url_schema)]
    pub avatar_url: Option<Option<WebUrl>>,
    /// `null` removes it.
    #[serde(default, deserialize_with = "clearable_text")]
    #[schema(inline)]
    pub location: Option<Option<Text<80, NotBlank>>>,
}

fn clearable_text<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<Text<80, NotBlank>>>, D::Error> {
    Option::<Text<80, NotBlank>>::deserialize(d).map(Some)
}

pub async fn update_profile(db: &Db, u: ProfileUpdate) -> Result<Profile, DbErr> {
    let mut row = profile::Entity::find_by_id(1)
        .one(db.read())
        .await?
        .ok_or_else(|| DbErr::RecordNotFound("profiles".to_owned()))?
        .into_active_model();
    if let Some(n) = u.display_name {
        row.display_name = Set(n.into_string());
    }
    if let Some(b) = u.bio {
        row.bio = Set(b.into_string());
    }
    if let Some(a) = u.avatar_url {
        row.avatar_url = Set(a.map(WebUrl::into_string));
    }
    if let Some(l) = u.location {
        row.location = Set(l.map(Text::into_string));
    }
    row.updated_at = Set(Utc::now());
    Ok(row.update(db.write()).await?.into())
}
