//! The usage-alerts tables.

use keel_platform::migrate::col::{big, serial, string as s, timestamp as ts};
use keel_platform::migrate::{Migration, MigrationSet, build_all};
use keel_platform::sea_orm::sea_query::{ColumnDef, Index, Table};
use keel_platform::sea_orm::{DbBackend, Statement};

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "usage_alerts",
    migrations: &[Migration {
        version: 0,
        name: "devices_events_totals_preferences_alerts",
        up: initial,
    }],
    tables: crate::entity::tables,
};

fn initial(b: DbBackend) -> Vec<Statement> {
    let devices = Table::create()
        .table("ua_devices")
        .col(s("device_token", 200).primary_key())
        .col(s("user_id", 255))
        .col(s("platform", 16))
        .col(ColumnDef::new("sandbox").boolean().not_null())
        .col(ts("registered_at"))
        .to_owned();
    let devices_by_user = Index::create()
        .name("ua_devices_user")
        .table("ua_devices")
        .col("user_id")
        .to_owned();
    let events = Table::create()
        .table("ua_events")
        .col(serial("seq"))
        .col(s("id", 36).unique_key())
        .col(s("user_id", 255))
        .col(s("session_id", 255))
        .col(s("timestamp", 64))
        .col(s("model", 255))
        .col(big("input_tokens"))
        .col(big("output_tokens"))
        .col(big("cache_read_tokens"))
        .col(big("cache_write_tokens"))
        .col(ColumnDef::new("cost_usd").double().not_null())
        .col(ts("created_at"))
        .to_owned();
    let events_by_user = Index::create()
        .name("ua_events_user_seq")
        .table("ua_events")
        .col("user_id")
        .col("seq")
        .to_owned();
    let totals = Table::create()
        .table("ua_daily_totals")
        .col(s("user_id", 255))
        .col(s("day", 10))
        .col(ColumnDef::new("cost_usd").double().not_null())
        .col(big("tokens"))
        .col(big("sessions"))
        .col(big("events"))
        .primary_key(Index::create().col("user_id").col("day"))
        .to_owned();
    let day_sessions = Table::create()
        .table("ua_day_sessions")
        .col(s("user_id", 255))
        .col(s("day", 10))
        .col(s("session_id", 255))
        .primary_key(Index::create().col("user_id").col("day").col("session_id"))
        .to_owned();
    let preferences = Table::create()
        .table("ua_preferences")
        .col(s("user_id", 255).primary_key())
        .col(ColumnDef::new("thresholds").text().not_null())
        .col(ts("updated_at"))
        .to_owned();
    let alerts = Table::create()
        .table("ua_alerts")
        .col(s("id", 36).primary_key())
        .col(s("user_id", 255))
        .col(s("day", 10))
        .col(s("threshold_type", 32))
        .col(ColumnDef::new("threshold_value").double().not_null())
        .col(ColumnDef::new("observed").double().not_null())
        .col(ColumnDef::new("note").text().null())
        .col(ts("created_at"))
        .to_owned();
    let alerts_once = Index::create()
        .name("ua_alerts_once_a_day")
        .table("ua_alerts")
        .col("user_id")
        .col("day")
        .col("threshold_type")
        .unique()
        .to_owned();
    let deliveries = Table::create()
        .table("ua_deliveries")
        .col(s("alert_id", 36))
        .col(s("device_token", 200))
        .col(s("platform", 16))
        .col(ColumnDef::new("sandbox").boolean().not_null())
        .col(s("status", 16))
        .col(ColumnDef::new("reason").text().null())
        .col(ColumnDef::new("apns_id").string_len(64).null())
        .col(ts("updated_at"))
        .primary_key(Index::create().col("alert_id").col("device_token"))
        .to_owned();
    let deliveries_by_status = Index::create()
        .name("ua_deliveries_status")
        .table("ua_deliveries")
        .col("status")
        .to_owned();
    build_all(
        b,
        &[
            &devices,
            &devices_by_user,
            &events,
            &events_by_user,
            &totals,
            &day_sessions,
            &preferences,
            &alerts,
            &alerts_once,
            &deliveries,
            &deliveries_by_status,
        ],
    )
}
