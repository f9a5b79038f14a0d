//! What every channel-api handler shares.

use std::sync::Arc;

use keel_platform::Platform;
use keel_platform::state::Shared;
use serde_json::{Value, json};

use crate::config::Config;
use crate::domain::channel::ChannelInfo;
use crate::domain::live::Live;
use crate::domain::playlist::Playlist;
use crate::domain::snapshot::Snapshot;
use crate::getstream::GetStream;

pub type AppState = Shared<Inner>;

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
    /// Checked against when no owner exists, so a sign-in costs the same.
    pub dummy_hash: String,
    /// Whose `X-Forwarded-For` is believed: `KEEL_TRUSTED_PROXIES` and
    /// loopback (channel-web forwarding from this host).
    pub trusted: Vec<std::net::IpAddr>,
}

impl Inner {
    /// An output as the configured transformer sends it.
    pub fn wrap(&self, data: Value) -> Value {
        if self.cfg.superjson {
            json!({ "json": data })
        } else {
            data
        }
    }

    /// An input as the configured transformer received it.
    pub fn unwrap(&self, input: Value) -> Value {
        match input {
            Value::Object(mut m) if self.cfg.superjson => m.remove("json").unwrap_or(Value::Null),
            other => other,
        }
    }
}
