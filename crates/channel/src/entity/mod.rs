//! SeaORM models of the channel tables (the API's names `channel_config`,
//! `stream_sessions`, `profiles` and `panels`; the rest are keel's).

pub mod asset;
pub mod auth_session;
pub mod channel_config;
pub mod emote_source;
pub mod owner;
pub mod panel;
pub mod profile;
pub mod setup_code;
pub mod stream_session;
pub mod viewer_sample;
pub mod webhook_seen;
