//! The platform's own tables.

use sea_orm::DbBackend;
use sea_orm::sea_query::{ColumnDef, Index, Table};

use crate::migrate::{Migration, MigrationSet, build_all};

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "platform",
    migrations: &[
        Migration {
            version: 0,
            name: "jobs",
            up: jobs,
        },
        Migration {
            version: 1,
            name: "cron_ticks",
            up: cron_ticks,
        },
        Migration {
            version: 2,
            name: "jobs_trace_parent",
            up: jobs_trace_parent,
        },
        Migration {
            version: 3,
            name: "audit",
            up: audit,
        },
    ],
    tables,
};

/// One row per cron tick claimed: whoever inserts it runs the tick.
fn cron_ticks(b: DbBackend) -> Vec<sea_orm::Statement> {
    use crate::migrate::col::{string, timestamp};
    let table = Table::create()
        .table("keel_cron_ticks")
        .col(string("name", 100))
        .col(timestamp("tick"))
        .primary_key(Index::create().col("name").col("tick"))
        .to_owned();
    build_all(b, &[&table])
}

/// The span that enqueued a job (W3C `traceparent`, 55 characters).
fn jobs_trace_parent(b: DbBackend) -> Vec<sea_orm::Statement> {
    let alter = Table::alter()
        .table("keel_jobs")
        .add_column(ColumnDef::new("trace_parent").string_len(64).null())
        .to_owned();
    build_all(b, &[&alter])
}

/// The one audit log (`audit`), read newest first per service, narrowed by
/// actor, action or subject.
fn audit(b: DbBackend) -> Vec<sea_orm::Statement> {
    use crate::migrate::col::{serial, string, string_null, timestamp};
    let table = Table::create()
        .table("keel_audit")
        .col(serial("id"))
        .col(timestamp("at"))
        .col(string("service", 40))
        .col(string("actor", 200))
        .col(string("action", 100))
        .col(string_null("subject", 200))
        .col(ColumnDef::new("before").text().null())
        .col(ColumnDef::new("after").text().null())
        .col(ColumnDef::new("detail").text().null())
        .col(string_null("address", 64))
        .to_owned();
    let by = |name: &str, col: &str| {
        Index::create()
            .name(format!("keel_audit_{name}"))
            .table("keel_audit")
            .col("service")
            .col(col.to_owned())
            .col("id")
            .to_owned()
    };
    let (actor, action, subject) = (
        by("actor", "actor"),
        by("action", "action"),
        by("subject", "subject"),
    );
    build_all(b, &[&table, &actor, &action, &subject])
}

fn jobs(b: DbBackend) -> Vec<sea_orm::Statement> {
    let table = Table::create()
        .table("keel_jobs")
        .col(crate::migrate::col::serial("id"))
        .col(ColumnDef::new("kind").string_len(100).not_null())
        .col(ColumnDef::new("payload").text().not_null())
        .col(ColumnDef::new("unique_key").string_len(200).null())
        .col(ColumnDef::new("status").string_len(16).not_null())
        .col(ColumnDef::new("attempts").integer().not_null())
        .col(ColumnDef::new("max_attempts").integer().not_null())
        .col(
            ColumnDef::new("run_at")
                .timestamp_with_time_zone()
                .not_null(),
        )
        .col(
            ColumnDef::new("locked_until")
                .timestamp_with_time_zone()
                .null(),
        )
        .col(ColumnDef::new("locked_by").string_len(100).null())
        .col(ColumnDef::new("last_error").text().null())
        .col(
            ColumnDef::new("created_at")
                .timestamp_with_time_zone()
                .not_null(),
        )
        .to_owned();
    let unique = Index::create()
        .name("keel_jobs_unique_key")
        .table("keel_jobs")
        .col("unique_key")
        .unique()
        .to_owned();
    let due = Index::create()
        .name("keel_jobs_due")
        .table("keel_jobs")
        .col("status")
        .col("run_at")
        .to_owned();
    build_all(b, &[&table, &unique, &due])
}

/// The platform's tables, for `keel db copy` (the migrations' own table is
/// made by migrating the target, not copied).
fn tables() -> Vec<crate::migrate::spec::TableSpec> {
    use crate::migrate::spec::TableSpec;
    vec![
        TableSpec::of::<crate::jobs::entity::Entity>(),
        TableSpec::of::<crate::jobs::cron::entity::Entity>(),
        TableSpec::of::<crate::audit::entity::Entity>(),
    ]
}
