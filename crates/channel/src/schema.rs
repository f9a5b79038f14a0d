//! The channel tables (migration set `channel`).

use keel_platform::migrate::col::{
    big, string as s, string_null as s_null, timestamp as ts, timestamp_null as ts_null,
};
use keel_platform::migrate::{Migration, MigrationSet, build_all};
use keel_platform::sea_orm::sea_query::{ColumnDef, Index, Query, Table};
use keel_platform::sea_orm::{DbBackend, Statement};

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "channel",
    migrations: &[
        Migration {
            version: 0,
            name: "channel_sessions_panels_owner_samples_emotes_assets",
            up: initial,
        },
        Migration {
            version: 1,
            name: "setup_codes",
            up: setup_codes,
        },
    ],
    tables: crate::entity::tables,
};

/// The one-time codes that let a visitor complete the set-up (hashes).
fn setup_codes(b: DbBackend) -> Vec<Statement> {
    let codes = Table::create()
        .table("channel_setup_codes")
        .col(s("code_hash", 64).primary_key())
        .col(ts("created_at"))
        .to_owned();
    build_all(b, &[&codes])
}

fn int(name: &'static str) -> ColumnDef {
    ColumnDef::new(name).integer().not_null().to_owned()
}

fn text(name: &'static str) -> ColumnDef {
    ColumnDef::new(name).text().not_null().to_owned()
}

fn initial(b: DbBackend) -> Vec<Statement> {
    let config = Table::create()
        .table("channel_config")
        .col(int("id").primary_key())
        .col(s("title", 200))
        .col(text("description"))
        .col(text("social_links"))
        .col(s_null("stream_call_id", 100))
        .col(s_null("chat_channel_cid", 200))
        .col(s_null("rtmps_url", 500))
        .col(ts_null("live_started_at"))
        .col(s_null("live_session_id", 36))
        .col(big("viewer_count"))
        .col(s_null("logo_hash", 64))
        .col(ts("updated_at"))
        .to_owned();
    let profiles = Table::create()
        .table("profiles")
        .col(int("id").primary_key())
        .col(s("display_name", 100))
        .col(text("bio"))
        .col(s_null("avatar_url", 500))
        .col(s_null("location", 100))
        .col(ts("updated_at"))
        .to_owned();
    let panels = Table::create()
        .table("panels")
        .col(s("id", 36).primary_key())
        .col(int("position"))
        .col(s("title", 100))
        .col(text("body"))
        .col(s_null("link_url", 500))
        .col(s_null("image_url", 500))
        .col(ts("created_at"))
        .col(ts("updated_at"))
        .to_owned();
    let sessions = Table::create()
        .table("stream_sessions")
        .col(s("id", 36).primary_key())
        .col(s("call_cid", 200))
        .col(ts("started_at"))
        .col(ts_null("ended_at"))
        .col(big("peak_viewers"))
        .col(ts_null("notified_at"))
        .to_owned();
    let sessions_by_start = Index::create()
        .name("stream_sessions_started")
        .table("stream_sessions")
        .col("started_at")
        .to_owned();
    let samples = Table::create()
        .table("viewer_samples")
        .col(s("session_id", 36))
        .col(ts("sampled_at"))
        .col(big("viewers"))
        .primary_key(Index::create().col("session_id").col("sampled_at"))
        .to_owned();
    let samples_by_time = Index::create()
        .name("viewer_samples_time")
        .table("viewer_samples")
        .col("sampled_at")
        .to_owned();
    let owner = Table::create()
        .table("channel_owner")
        .col(int("id").primary_key())
        .col(s("email", 254))
        .col(s("password_hash", 200))
        .col(ts("created_at"))
        .col(ts("updated_at"))
        .to_owned();
    let auth = Table::create()
        .table("channel_auth_sessions")
        .col(s("token_hash", 64).primary_key())
        .col(int("owner_id"))
        .col(ts("created_at"))
        .col(ts("expires_at"))
        .to_owned();
    let emotes = Table::create()
        .table("emote_sources")
        .col(s("source", 32).primary_key())
        .col(text("emotes"))
        .col(ts("fetched_at"))
        .to_owned();
    let assets = Table::create()
        .table("channel_assets")
        .col(s("hash", 64).primary_key())
        .col(s("content_type", 50))
        .col(ColumnDef::new("bytes").blob().not_null())
        .col(int("width"))
        .col(int("height"))
        .col(ts("created_at"))
        .to_owned();
    let seen = Table::create()
        .table("channel_webhooks_seen")
        .col(s("webhook_id", 100).primary_key())
        .col(ts("received_at"))
        .to_owned();
    let now = chrono::Utc::now();
    let default_config = Query::insert()
        .into_table("channel_config")
        .columns([
            "id",
            "title",
            "description",
            "social_links",
            "viewer_count",
            "updated_at",
        ])
        .values_panic([
            1.into(),
            "My channel".into(),
            "".into(),
            "[]".into(),
            0i64.into(),
            now.into(),
        ])
        .to_owned();
    let default_profile = Query::insert()
        .into_table("profiles")
        .columns(["id", "display_name", "bio", "updated_at"])
        .values_panic([1.into(), "".into(), "".into(), now.into()])
        .to_owned();
    build_all(
        b,
        &[
            &config,
            &profiles,
            &panels,
            &sessions,
            &sessions_by_start,
            &samples,
            &samples_by_time,
            &owner,
            &auth,
            &emotes,
            &assets,
            &seen,
            &default_config,
            &default_profile,
        ],
    )
}
