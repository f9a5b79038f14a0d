//! `stream.isLive`, `stream.provision`, `stream.credentials`,
//! `stream.goLive`, `stream.end`, `stream.viewerToken`.

use std::time::Duration;

use serde::Serialize;
use utoipa::ToSchema;

use super::{Acknowledged, Ctx};
use crate::domain::channel;
use crate::domain::live::{self, LiveStatus};
use crate::error::{self, Error};
use crate::getstream::{ANONYMOUS, CALL_TYPE};
use crate::routes::auth::limited;
use crate::trpc::{Access, Kind, Procedures, no_input};

/// How long a viewer token is good for.
const VIEWER_TOKEN_TTL: Duration = Duration::from_secs(6 * 3600);

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Provisioned {
    pub stream_call_id: String,
    pub call_cid: String,
    pub chat_channel_cid: String,
    /// The RTMPS ingest URL for OBS.
    pub rtmps_url: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Credentials {
    /// OBS: Settings → Stream → Server.
    pub rtmps_url: String,
    /// OBS: Stream Key (the broadcaster's provider token). Secret.
    pub stream_key: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ViewerToken {
    /// The provider's public API key.
    pub api_key: String,
    /// A token for this call only, as an anonymous viewer.
    pub token: String,
    pub user_id: String,
    pub call_type: String,
    pub call_id: String,
    pub call_cid: String,
    pub chat_channel_cid: String,
    /// The HLS playlist while live (`null` before the stream is public).
    pub hls_playlist_url: Option<String>,
}

pub fn add(p: Procedures<Ctx>) -> Procedures<Ctx> {
    p.procedure(Kind::Query, "stream.isLive", Access::Public, "Whether the channel is live, since when, and how many watch (polled every 10 s; served from a cache)", no_input(is_live))
        .procedure(Kind::Mutation, "stream.provision", Access::SignedIn, "Gets or creates the provider's livestream call and its chat; stores their ids; idempotent", no_input(provision))
        .procedure(Kind::Query, "stream.credentials", Access::SignedIn, "The RTMPS URL and the stream key for OBS", no_input(credentials))
        .procedure(Kind::Mutation, "stream.goLive", Access::SignedIn, "Makes the call public (starts HLS); the provider then reports it live", no_input(go_live))
        .procedure(Kind::Mutation, "stream.end", Access::SignedIn, "Stops the live stream at the provider and ends the live state at once", no_input(end))
        .procedure(Kind::Query, "stream.viewerToken", Access::Public, "What a browser needs to watch and chat anonymously", no_input(viewer_token))
}

async fn is_live(ctx: Ctx) -> Result<LiveStatus, Error> {
    Ok(ctx.state.live.status().await?.as_ref().clone())
}

async fn provision(ctx: Ctx) -> Result<Provisioned, Error> {
    let s = &ctx.state.stream;
    // Both at the provider first: nothing is stored unless both exist.
    s.upsert_broadcaster().await?;
    let call = s.get_or_create_call().await?;
    let chat = s.get_or_create_chat().await?;
    let rtmps = call.rtmp_address.ok_or_else(error::no_ingest_address)?;
    channel::set_stream(&ctx.state.platform.db, s.call_id(), &chat, &rtmps).await?;
    ctx.info_changed();
    Ok(Provisioned {
        stream_call_id: s.call_id().to_owned(),
        call_cid: call.cid,
        chat_channel_cid: chat,
        rtmps_url: rtmps,
    })
}

async fn credentials(ctx: Ctx) -> Result<Credentials, Error> {
    let c = channel::config(&ctx.state.platform.db).await?;
    let rtmps_url = c.rtmps_url.ok_or_else(error::not_provisioned)?;
    Ok(Credentials {
        rtmps_url,
        stream_key: ctx.state.stream.broadcaster_token()?,
    })
}

async fn go_live(ctx: Ctx) -> Result<Acknowledged, Error> {
    let c = channel::config(&ctx.state.platform.db).await?;
    if c.stream_call_id.is_none() {
        return Err(error::not_provisioned());
    }
    ctx.state.stream.go_live().await?;
    Ok(Acknowledged::YES)
}

async fn end(ctx: Ctx) -> Result<LiveStatus, Error> {
    let db = &ctx.state.platform.db;
    let c = channel::config(db).await?;
    if c.stream_call_id.is_none() {
        return Err(error::not_provisioned());
    }
    ctx.state.stream.stop_live().await?;
    live::end_now(db).await?;
    ctx.state.live.publish().await;
    Ok(ctx.state.live.status().await?.as_ref().clone())
}

async fn viewer_token(ctx: Ctx) -> Result<ViewerToken, Error> {
    limited(
        &ctx.state,
        "channel:viewer-token:ip",
        &ctx.peer.to_string(),
        ctx.state.cfg.viewer_tokens_per_minute,
        "Too many viewer tokens asked for; try again in a minute",
    )
    .await?;
    let s = &ctx.state.stream;
    let c = channel::config(&ctx.state.platform.db).await?;
    let (Some(call_id), Some(chat)) = (c.stream_call_id, c.chat_channel_cid) else {
        return Err(error::not_provisioned());
    };
    // Signed here: a viewer token costs the provider nothing.
    let token = s.viewer_token(VIEWER_TOKEN_TTL)?;
    let api_key = s.api_key().unwrap_or_default().to_owned();
    let hls = match &c.live_session_id {
        Some(session) => {
            let ask = || async { s.get_call().await.ok().and_then(|c| c.hls_playlist_url) };
            ctx.state.playlist.of(session, ask).await
        }
        None => None,
    };
    Ok(ViewerToken {
        api_key,
        token,
        user_id: ANONYMOUS.to_owned(),
        call_type: CALL_TYPE.to_owned(),
        call_cid: format!("{CALL_TYPE}:{call_id}"),
        call_id,
        chat_channel_cid: chat,
        hls_playlist_url: hls,
    })
}
