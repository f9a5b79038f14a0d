//! What every channel-api handler shares.

use std::sync::Arc;

use keel_platform::Platform;

use crate::config::Config;
use crate::domain::channel::ChannelInfo;
use crate::domain::live::Live;
use crate::domain::playlist::Playlist;
use crate::domain::snapshot::Snapshot;
use crate::getstream::GetStream;

pub type AppState = std::sync::Arc<Inner>;

pub struct Inner {
    pub platform: Platform,
    /// `channel.getInfo`, at most a second old on other nodes; a change
    /// made here drops it at once.
    pub info: Snapshot<ChannelInfo>,
    pub cfg: Arc<Config>,
    pub stream: GetStream,
    pub live: Arc<Live>,
    /// The live call's HLS playlist, asked of the provider once a session.
    pub playlist: Playlist,
    /// Whose `X-Forwarded-For` is believed: `KEEL_TRUSTED_PROXIES` and
    /// loopback (channel-web forwarding from this host).
    pub trusted: keel_platform::config::TrustedProxies,
}
