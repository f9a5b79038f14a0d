//! channel-web: the channel page, the set-up wizard, sign-in and the
//! dashboard (server-rendered), their scripts and styles, and `/api/*`
//! forwarded to channel-api. See docs/channel.md.

pub mod assets;
mod pages;
mod proxy;
mod security;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::http::HeaderMap;
use keel_platform::Platform;
use keel_platform::sea_orm::DbErr;

use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::utoipa_axum::routes;

use crate::config::Config;
use crate::domain::channel::{self, ChannelInfo};
use crate::domain::live::{Live, LiveStatus};
use crate::domain::owner::{self, Owner};
use crate::domain::snapshot::Snapshot;

pub use proxy::Proxy;

/// How old the channel information a page shows may be on a node other
/// than the one where it was edited.
pub const INFO_MAX_AGE: Duration = Duration::from_secs(1);

pub type WebState = std::sync::Arc<WebInner>;

/// What every channel-web handler shares.
pub struct WebInner {
    pub platform: Platform,
    pub cfg: Arc<Config>,
    pub live: Live,
    pub proxy: Proxy,
    info: Snapshot<ChannelInfo>,
    /// Once an owner exists it always will: no need to ask again.
    owner_exists: AtomicBool,
}

impl WebInner {
    pub fn new(platform: Platform, cfg: Arc<Config>, proxy: Proxy) -> Self {
        Self {
            live: Live::new(platform.db.clone()),
            platform,
            cfg,
            proxy,
            info: Snapshot::new(INFO_MAX_AGE),
            owner_exists: AtomicBool::new(false),
        }
    }

    /// Whether set-up is done (an owner exists).
    pub async fn set_up(&self) -> Result<bool, DbErr> {
        if self.owner_exists.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let exists = owner::exists(&self.platform.db).await?;
        if exists {
            self.owner_exists.store(true, Ordering::Relaxed);
        }
        Ok(exists)
    }

    async fn load_info(&self) -> Result<ChannelInfo, DbErr> {
        let page = self.cfg.public_url.as_str().trim_end_matches('/');
        channel::info(&self.platform.db, self.cfg.stream.api_key.as_deref(), page).await
    }

    /// The channel as `channel.getInfo` has it, at most a second old.
    pub async fn info(&self) -> Result<Arc<ChannelInfo>, DbErr> {
        self.info.get(|| self.load_info()).await
    }

    /// The channel as it is now (for the owner's own pages).
    pub async fn fresh_info(&self) -> Result<Arc<ChannelInfo>, DbErr> {
        Ok(self.info.put(self.load_info().await?))
    }

    /// Something may have changed (a change went through the proxy): the
    /// next page reads the channel again.
    pub fn changed(&self) {
        self.info.invalidate();
    }

    pub async fn live(&self) -> Result<Arc<LiveStatus>, DbErr> {
        self.live.status().await
    }

    /// The owner, if the request carries their session cookie.
    pub async fn signed_in(&self, headers: &HeaderMap) -> Result<Option<Owner>, DbErr> {
        match crate::auth::session_token(headers) {
            Some(token) => owner::find_session(&self.platform.db, token).await,
            None => Ok(None),
        }
    }
}

/// The entries of the built assets the pages load.
pub const ENTRIES: [&str; 5] = [
    "style.css",
    "channel.js",
    "dashboard.js",
    "setup.js",
    "login.js",
];

pub fn router(state: WebState) -> Result<OpenApiRouter, security::InvalidHeaderValue> {
    let headers = security::headers(&state.cfg)?;
    Ok(OpenApiRouter::new()
        .routes(routes!(pages::channel::page))
        .routes(routes!(pages::setup::page))
        .routes(routes!(pages::login::page))
        .routes(routes!(pages::dashboard::page))
        .routes(routes!(assets::serve))
        .routes(routes!(proxy::forward))
        .layer(axum::middleware::from_fn_with_state(
            headers,
            keel_platform::http::PageHeaders::layer,
        ))
        .with_state(state))
}
