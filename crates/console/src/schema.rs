//! The console's tables: its operators and their sessions.

use keel_platform::migrate::col::{
    serial, string as s, string_null, timestamp as ts, timestamp_null,
};
use keel_platform::migrate::{Migration, MigrationSet, build_all};
use keel_platform::sea_orm::sea_query::{ColumnDef, Index, Table};
use keel_platform::sea_orm::{DbBackend, Statement};

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "console",
    migrations: &[Migration {
        version: 0,
        name: "operators_and_sessions",
        up: initial,
    }],
    tables: crate::entity::tables,
};

fn initial(b: DbBackend) -> Vec<Statement> {
    let operators = Table::create()
        .table("keel_operators")
        .col(serial("id"))
        .col(s("name", 60))
        // Lower-cased name: unique.
        .col(s("name_key", 60).unique_key())
        .col(s("password_hash", 200))
        // The sealed base32 TOTP secret.
        .col(s("totp_secret", 200))
        .col(ColumnDef::new("totp_last_step").big_integer().not_null())
        .col(s("roles", 200))
        .col(timestamp_null("disabled_at"))
        .col(ts("created_at"))
        .to_owned();
    let sessions = Table::create()
        .table("keel_operator_sessions")
        .col(s("token_hash", 64).primary_key())
        .col(ColumnDef::new("operator_id").big_integer().not_null())
        .col(s("csrf_hash", 64))
        .col(ts("created_at"))
        .col(ts("expires_at"))
        .col(string_null("address", 64))
        .to_owned();
    let by_operator = Index::create()
        .name("keel_operator_sessions_operator")
        .table("keel_operator_sessions")
        .col("operator_id")
        .to_owned();
    build_all(b, &[&operators, &sessions, &by_operator])
}
