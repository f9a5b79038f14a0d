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

/// Every table of this component, for `keel db copy`.
pub fn tables() -> Vec<keel_platform::migrate::spec::TableSpec> {
    use keel_platform::migrate::spec::TableSpec;
    vec![
        TableSpec::of::<channel_config::Entity>(),
        TableSpec::of::<owner::Entity>(),
        TableSpec::of::<auth_session::Entity>(),
        TableSpec::of::<setup_code::Entity>(),
        TableSpec::of::<profile::Entity>(),
        TableSpec::of::<panel::Entity>(),
        TableSpec::of::<asset::Entity>(),
        TableSpec::of::<emote_source::Entity>(),
        TableSpec::of::<stream_session::Entity>(),
        TableSpec::of::<viewer_sample::Entity>(),
        TableSpec::of::<webhook_seen::Entity>(),
    ]
}
