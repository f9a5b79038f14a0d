//! The emote set: 7TV, BetterTTV and FrankerFaceZ, each global and for the
//! Twitch channel, fetched by the refresh job into one row per source (a
//! source that fails keeps its previous emotes; a channel a source does not
//! know, 404, has none there), and merged for `emotes.list`.
//!
//! Precedence when two emotes share a name: the channel's own emotes win
//! over global ones; within each, 7TV over BetterTTV over FrankerFaceZ.

use std::collections::HashSet;

use chrono::Utc;
use keel_platform::db::Db;
use keel_platform::outbound::HttpClient;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{ConnectionTrait, DbErr, EntityTrait, PaginatorTrait, Set};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::config::EmoteConfig;
use crate::entity::emote_source;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Emote {
    /// What chat messages write, e.g. `KEKW`.
    pub name: String,
    /// The image (1x).
    pub url: String,
    /// `7tv`, `bttv` or `ffz`.
    pub provider: String,
    /// `channel` or `global`.
    pub scope: String,
}

/// The sources in precedence order.
pub const SOURCES: [Source; 6] = [
    Source::SevenTv(Scope::Channel),
    Source::Bttv(Scope::Channel),
    Source::Ffz(Scope::Channel),
    Source::SevenTv(Scope::Global),
    Source::Bttv(Scope::Global),
    Source::Ffz(Scope::Global),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Channel,
    Global,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    SevenTv(Scope),
    Bttv(Scope),
    Ffz(Scope),
}

impl Source {
    fn provider(self) -> &'static str {
        match self {
            Self::SevenTv(_) => "7tv",
            Self::Bttv(_) => "bttv",
            Self::Ffz(_) => "ffz",
        }
    }

    fn scope(self) -> Scope {
        match self {
            Self::SevenTv(s) | Self::Bttv(s) | Self::Ffz(s) => s,
        }
    }

    /// The row key, e.g. `7tv-global`.
    pub fn key(self) -> String {
        let scope = match self.scope() {
            Scope::Channel => "channel",
            Scope::Global => "global",
        };
        format!("{}-{scope}", self.provider())
    }

    /// Where it is fetched; `None` for a channel source without a Twitch id.
    fn url(self, cfg: &EmoteConfig) -> Option<String> {
        let id = cfg.twitch_id.as_deref();
        Some(match self {
            Self::SevenTv(Scope::Global) => format!("{}/v3/emote-sets/global", cfg.seventv_url),
            Self::SevenTv(Scope::Channel) => format!("{}/v3/users/twitch/{}", cfg.seventv_url, id?),
            Self::Bttv(Scope::Global) => format!("{}/3/cached/emotes/global", cfg.bttv_url),
            Self::Bttv(Scope::Channel) => format!("{}/3/cached/users/twitch/{}", cfg.bttv_url, id?),
            Self::Ffz(Scope::Global) => format!("{}/v1/set/global", cfg.ffz_url),
            Self::Ffz(Scope::Channel) => format!("{}/v1/room/id/{}", cfg.ffz_url, id?),
        })
    }

    /// The emotes of an answer.
    fn parse(self, v: &Value) -> Vec<(String, String)> {
        match self {
            Self::SevenTv(Scope::Global) => seventv(&v["emotes"]),
            Self::SevenTv(Scope::Channel) => seventv(&v["emote_set"]["emotes"]),
            Self::Bttv(Scope::Global) => bttv(v),
            Self::Bttv(Scope::Channel) => {
                [bttv(&v["channelEmotes"]), bttv(&v["sharedEmotes"])].concat()
            }
            Self::Ffz(_) => ffz(v),
        }
    }
}

fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn seventv(v: &Value) -> Vec<(String, String)> {
    list(v)
        .iter()
        .filter_map(|e| {
            let (id, name) = (e["id"].as_str()?, e["name"].as_str()?);
            Some((
                name.to_owned(),
                format!("https://cdn.7tv.app/emote/{id}/1x.webp"),
            ))
        })
        .collect()
}

fn bttv(v: &Value) -> Vec<(String, String)> {
    list(v)
        .iter()
        .filter_map(|e| {
            let (id, code) = (e["id"].as_str()?, e["code"].as_str()?);
            Some((
                code.to_owned(),
                format!("https://cdn.betterttv.net/emote/{id}/1x"),
            ))
        })
        .collect()
}

/// FrankerFaceZ: the sets named by `default_sets` (global) or `room.set`
/// (a room), or every set when neither names one.
fn ffz(v: &Value) -> Vec<(String, String)> {
    let wanted: Vec<String> = match (&v["default_sets"], &v["room"]["set"]) {
        (Value::Array(ids), _) => ids
            .iter()
            .map(|i| i.to_string().trim_matches('"').to_owned())
            .collect(),
        (_, id @ Value::Number(_)) => vec![id.to_string()],
        _ => Vec::new(),
    };
    let sets = v["sets"].as_object().cloned().unwrap_or_default();
    sets.iter()
        .filter(|(id, _)| wanted.is_empty() || wanted.iter().any(|w| w == *id))
        .flat_map(|(_, set)| list(&set["emoticons"]).to_vec())
        .filter_map(|e| {
            let name = e["name"].as_str()?;
            let url = e["urls"]["1"].as_str()?;
            let url = if url.starts_with("//") {
                format!("https:{url}")
            } else {
                url.to_owned()
            };
            Some((name.to_owned(), url))
        })
        .collect()
}

/// What one source's fetch came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    Emotes(usize),
    /// The channel is not known there (404): no emotes.
    NoneThere,
    /// Not fetched (no Twitch id for a channel source).
    Skipped,
    /// The fetch failed; the previous emotes stay.
    Failed(String),
}

/// Why a source's emotes could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("the emote source could not be reached")]
    Unreachable(#[from] keel_platform::outbound::OutboundError),
    #[error("the emote source answered HTTP {0}")]
    Status(u16),
    #[error("the emote source's answer is not JSON")]
    Body(#[source] reqwest::Error),
}

/// Fetches every source and stores what each gave, all in one
/// transaction (the merged set changes at once).
pub async fn refresh(
    db: &Db,
    http: &HttpClient,
    cfg: &EmoteConfig,
) -> Result<Vec<(String, Fetched)>, DbErr> {
    let runs = SOURCES
        .iter()
        .map(|&s| async move { (s, fetch(http, cfg, s).await) });
    let results = futures::future::join_all(runs).await;
    let txn = db.begin_write().await?;
    let mut out = Vec::new();
    for (source, result) in results {
        let fetched = match result {
            Ok(Some(emotes)) => {
                let n = emotes.len();
                store(&txn, source, &emotes).await?;
                if n == 0 {
                    Fetched::NoneThere
                } else {
                    Fetched::Emotes(n)
                }
            }
            Ok(None) => Fetched::Skipped,
            Err(e) => {
                let e = keel_platform::failure::chain(&e);
                tracing::warn!(source = %source.key(), error = %e, "an emote source failed; its previous emotes stay");
                Fetched::Failed(e)
            }
        };
        out.push((source.key(), fetched));
    }
    txn.commit().await?;
    Ok(out)
}

async fn fetch(
    http: &HttpClient,
    cfg: &EmoteConfig,
    s: Source,
) -> Result<Option<Vec<Emote>>, FetchError> {
    let Some(url) = s.url(cfg) else {
        return Ok(None);
    };
    let resp = http
        .send_idempotent(|| http.client().get(&url).header("accept", "application/json"))
        .await?;
    if resp.status().as_u16() == 404 && s.scope() == Scope::Channel {
        return Ok(Some(Vec::new()));
    }
    if !resp.status().is_success() {
        return Err(FetchError::Status(resp.status().as_u16()));
    }
    let v: Value = resp.json().await.map_err(FetchError::Body)?;
    let scope = match s.scope() {
        Scope::Channel => "channel",
        Scope::Global => "global",
    };
    Ok(Some(
        s.parse(&v)
            .into_iter()
            .map(|(name, url)| Emote {
                name,
                url,
                provider: s.provider().to_owned(),
                scope: scope.to_owned(),
            })
            .collect(),
    ))
}

async fn store<C: ConnectionTrait>(
    conn: &C,
    source: Source,
    emotes: &[Emote],
) -> Result<(), DbErr> {
    let json = serde_json::to_string(emotes).map_err(|e| DbErr::Json(e.to_string()))?;
    emote_source::Entity::insert(emote_source::ActiveModel {
        source: Set(source.key()),
        emotes: Set(json),
        fetched_at: Set(Utc::now()),
    })
    .on_conflict(
        OnConflict::column(emote_source::Column::Source)
            .update_columns([
                emote_source::Column::Emotes,
                emote_source::Column::FetchedAt,
            ])
            .to_owned(),
    )
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

/// Whether no source was ever fetched.
pub async fn never_fetched(db: &Db) -> Result<bool, DbErr> {
    Ok(emote_source::Entity::find().count(db.read()).await? == 0)
}

/// The merged set: each name once, by precedence.
pub async fn merged(db: &Db) -> Result<Vec<Emote>, DbErr> {
    let rows = emote_source::Entity::find().all(db.read()).await?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for source in SOURCES {
        let key = source.key();
        let Some(row) = rows.iter().find(|r| r.source == key) else {
            continue;
        };
        let emotes: Vec<Emote> = serde_json::from_str(&row.emotes).unwrap_or_default();
        for e in emotes {
            if seen.insert(e.name.clone()) {
                out.push(e);
            }
        }
    }
    Ok(out)
}
