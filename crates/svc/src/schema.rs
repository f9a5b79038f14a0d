//! The svc tables (forms and the host site; push adds its own).

use keel_platform::migrate::{Migration, MigrationSet, build_all};
use keel_platform::sea_orm::sea_query::{ColumnDef, ForeignKey, ForeignKeyAction, Index, Table};
use keel_platform::sea_orm::{DbBackend, Statement};

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "svc",
    migrations: &[Migration {
        version: 0,
        name: "site_users_forms",
        up: site_users_forms,
    }],
};

fn s(name: &'static str, len: u32) -> ColumnDef {
    ColumnDef::new(name).string_len(len).not_null().to_owned()
}

fn ts(name: &'static str) -> ColumnDef {
    ColumnDef::new(name)
        .timestamp_with_time_zone()
        .not_null()
        .to_owned()
}

fn serial(name: &'static str) -> ColumnDef {
    ColumnDef::new(name)
        .big_integer()
        .not_null()
        .auto_increment()
        .primary_key()
        .to_owned()
}

fn site_users_forms(b: DbBackend) -> Vec<Statement> {
    let settings = Table::create()
        .table("svc_settings")
        .col(s("key", 64).primary_key())
        .col(ColumnDef::new("value").text().not_null())
        .col(ts("updated_at"))
        .to_owned();
    let users = Table::create()
        .table("svc_users")
        .col(serial("id"))
        .col(s("username", 60).unique_key())
        .col(s("password_hash", 200))
        .col(ColumnDef::new("capabilities").text().not_null())
        .col(ts("created_at"))
        .to_owned();
    let app_passwords = Table::create()
        .table("svc_app_passwords")
        .col(s("id", 36).primary_key())
        .col(ColumnDef::new("user_id").big_integer().not_null())
        .col(s("name", 100))
        .col(s("password_hash", 64))
        .col(ts("created_at"))
        .foreign_key(
            &mut ForeignKey::create()
                .from("svc_app_passwords", "user_id")
                .to("svc_users", "id")
                .on_delete(ForeignKeyAction::Cascade)
                .to_owned(),
        )
        .to_owned();
    let app_password_names = Index::create()
        .name("svc_app_passwords_user_name")
        .table("svc_app_passwords")
        .col("user_id")
        .col("name")
        .unique()
        .to_owned();
    let sessions = Table::create()
        .table("svc_sessions")
        .col(s("token_hash", 64).primary_key())
        .col(ColumnDef::new("user_id").big_integer().not_null())
        .col(s("nonce", 64))
        .col(ts("expires_at"))
        .col(ts("created_at"))
        .foreign_key(
            &mut ForeignKey::create()
                .from("svc_sessions", "user_id")
                .to("svc_users", "id")
                .on_delete(ForeignKeyAction::Cascade)
                .to_owned(),
        )
        .to_owned();
    let forms = Table::create()
        .table("svc_forms")
        .col(s("id", 100).primary_key())
        .col(s("title", 200))
        .col(ColumnDef::new("fields").text().not_null())
        .col(ts("created_at"))
        .col(ts("updated_at"))
        .to_owned();
    let submissions = Table::create()
        .table("svc_submissions")
        .col(serial("id"))
        .col(s("form_id", 100))
        .col(ColumnDef::new("field_values").text().not_null())
        .col(s("app_id", 255))
        .col(ts("created_at"))
        .to_owned();
    let submissions_by_form = Index::create()
        .name("svc_submissions_form")
        .table("svc_submissions")
        .col("form_id")
        .col("id")
        .to_owned();
    let audit = Table::create()
        .table("svc_audit")
        .col(serial("id"))
        .col(s("event", 64))
        .col(s("app_id", 255))
        .col(ColumnDef::new("form_id").string_len(100).null())
        .col(s("token_hash", 64))
        .col(ts("created_at"))
        .to_owned();
    build_all(
        b,
        &[
            &settings,
            &users,
            &app_passwords,
            &app_password_names,
            &sessions,
            &forms,
            &submissions,
            &submissions_by_form,
            &audit,
        ],
    )
}
