//! The accounts tables.

use keel_platform::migrate::col::{
    serial, string, string_null, timestamp as ts, timestamp_null as ts_null,
};
use keel_platform::migrate::{Migration, MigrationSet, build_all};
use keel_platform::sea_orm::sea_query::{
    ColumnDef, ForeignKey, ForeignKeyAction, ForeignKeyCreateStatement, Index, Table,
};
use keel_platform::sea_orm::{DbBackend, Statement};

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "accounts",
    migrations: &[
        Migration {
            version: 0,
            name: "users_sessions_goals",
            up: initial,
        },
        Migration {
            version: 1,
            name: "goals_by_user_newest",
            up: goals_by_user_newest,
        },
        Migration {
            version: 2,
            name: "weekly_in_yearly_and_weekly_mail",
            up: weekly_in_yearly_and_weekly_mail,
        },
        Migration {
            version: 3,
            name: "passkeys",
            up: passkeys,
        },
        Migration {
            version: 4,
            name: "ban_until",
            up: ban_until,
        },
    ],
    tables: crate::entity::tables,
};

fn id(name: &'static str) -> ColumnDef {
    string(name, 24)
}

fn owned_by_user(table: &'static str, column: &'static str) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(table, column)
        .to("accounts_users", "id")
        .on_delete(ForeignKeyAction::Cascade)
        .to_owned()
}

fn initial(b: DbBackend) -> Vec<Statement> {
    let users = Table::create()
        .table("accounts_users")
        .col(id("id").primary_key())
        .col(ColumnDef::new("username").string_len(30).not_null())
        .col(
            ColumnDef::new("username_key")
                .string_len(30)
                .not_null()
                .unique_key(),
        )
        .col(ColumnDef::new("email").string_len(254).not_null())
        .col(
            ColumnDef::new("email_key")
                .string_len(254)
                .not_null()
                .unique_key(),
        )
        .col(ColumnDef::new("slug").string_len(30).not_null())
        .col(ColumnDef::new("role").string_len(20).not_null())
        .col(ColumnDef::new("password_hash").string_len(200).not_null())
        .col(ColumnDef::new("two_factor").boolean().not_null())
        .col(ColumnDef::new("totp_secret").text().null())
        .col(ColumnDef::new("totp_pending").text().null())
        .col(ColumnDef::new("totp_last_step").big_integer().not_null())
        .col(ColumnDef::new("email_verified").boolean().not_null())
        .col(ColumnDef::new("is_banned").boolean().not_null())
        .col(ColumnDef::new("streamer_mode").boolean().not_null())
        .col(ColumnDef::new("notify_weekly_goals").boolean().not_null())
        .col(ColumnDef::new("revision").integer().not_null())
        .col(ts("created_at"))
        .col(ts("updated_at"))
        .to_owned();
    let sessions = Table::create()
        .table("accounts_sessions")
        .col(id("id").primary_key())
        .col(id("user_id"))
        .col(ColumnDef::new("browser").string_len(100).not_null())
        .col(ColumnDef::new("version").string_len(100).not_null())
        .col(ColumnDef::new("platform").string_len(100).not_null())
        .col(ColumnDef::new("os").string_len(100).not_null())
        .col(ColumnDef::new("is_dev").boolean().not_null())
        .col(ColumnDef::new("location").string_len(200).not_null())
        .col(ts("expire_at"))
        .col(ts("created_at"))
        .col(ts_null("revoked_at"))
        .foreign_key(&mut owned_by_user("accounts_sessions", "user_id"))
        .to_owned();
    let sessions_by_user = Index::create()
        .name("accounts_sessions_user")
        .table("accounts_sessions")
        .col("user_id")
        .to_owned();
    let refresh = Table::create()
        .table("accounts_refresh_tokens")
        .col(
            ColumnDef::new("hash")
                .string_len(64)
                .not_null()
                .primary_key(),
        )
        .col(id("session_id"))
        .col(ts_null("spent_at"))
        .col(ts("created_at"))
        .foreign_key(
            &mut ForeignKey::create()
                .from("accounts_refresh_tokens", "session_id")
                .to("accounts_sessions", "id")
                .on_delete(ForeignKeyAction::Cascade)
                .to_owned(),
        )
        .to_owned();
    let backup = Table::create()
        .table("accounts_backup_codes")
        .col(id("user_id"))
        .col(ColumnDef::new("position").integer().not_null())
        .col(ColumnDef::new("sealed_code").text().not_null())
        .col(ts_null("used_at"))
        .primary_key(Index::create().col("user_id").col("position"))
        .foreign_key(&mut owned_by_user("accounts_backup_codes", "user_id"))
        .to_owned();
    let code_failures = Table::create()
        .table("accounts_code_failures")
        .col(serial("id"))
        .col(id("user_id"))
        .col(ts("failed_at"))
        .foreign_key(&mut owned_by_user("accounts_code_failures", "user_id"))
        .to_owned();
    let failures_by_user = Index::create()
        .name("accounts_code_failures_user")
        .table("accounts_code_failures")
        .col("user_id")
        .col("failed_at")
        .to_owned();
    let email_changes = Table::create()
        .table("accounts_email_changes")
        .col(id("user_id").primary_key())
        .col(ColumnDef::new("new_email").string_len(254).not_null())
        .col(
            ColumnDef::new("token_hash")
                .string_len(64)
                .not_null()
                .unique_key(),
        )
        .col(ts("expires_at"))
        .col(ts("sent_at"))
        .foreign_key(&mut owned_by_user("accounts_email_changes", "user_id"))
        .to_owned();
    let verifications = Table::create()
        .table("accounts_email_verifications")
        .col(
            ColumnDef::new("token_hash")
                .string_len(64)
                .not_null()
                .primary_key(),
        )
        .col(id("user_id"))
        .col(ColumnDef::new("email").string_len(254).not_null())
        .col(ts("expires_at"))
        .foreign_key(&mut owned_by_user(
            "accounts_email_verifications",
            "user_id",
        ))
        .to_owned();
    let weekly = Table::create()
        .table("accounts_weekly_goals")
        .col(id("id").primary_key())
        .col(id("user_id"))
        .col(ColumnDef::new("title").string_len(200).not_null())
        .col(ColumnDef::new("is_completed").boolean().not_null())
        .col(ColumnDef::new("revision").integer().not_null())
        .col(ts("created_at"))
        .col(ts("updated_at"))
        .foreign_key(&mut owned_by_user("accounts_weekly_goals", "user_id"))
        .to_owned();
    let weekly_by_user = Index::create()
        .name("accounts_weekly_goals_user")
        .table("accounts_weekly_goals")
        .col("user_id")
        .col("id")
        .to_owned();
    let yearly = Table::create()
        .table("accounts_yearly_goals")
        .col(id("id").primary_key())
        .col(id("user_id"))
        .col(ColumnDef::new("title").string_len(200).not_null())
        .col(ColumnDef::new("is_completed").boolean().not_null())
        .col(ts("complete_by"))
        .col(ColumnDef::new("weekly").text().not_null())
        .col(ColumnDef::new("revision").integer().not_null())
        .col(ts("created_at"))
        .col(ts("updated_at"))
        .foreign_key(&mut owned_by_user("accounts_yearly_goals", "user_id"))
        .to_owned();
    let yearly_by_user = Index::create()
        .name("accounts_yearly_goals_user")
        .table("accounts_yearly_goals")
        .col("user_id")
        .col("id")
        .to_owned();
    build_all(
        b,
        &[
            &users,
            &sessions,
            &sessions_by_user,
            &refresh,
            &backup,
            &code_failures,
            &failures_by_user,
            &email_changes,
            &verifications,
            &weekly,
            &weekly_by_user,
            &yearly,
            &yearly_by_user,
        ],
    )
}

/// A user's goals in the order they are listed (newest first), so the list
/// reads the index backwards instead of sorting (SQLite's plan showed a
/// temporary B-tree for the ORDER BY). The user_id prefix still serves the
/// 1000-goal check and the cascade; a goal by id is the primary key's.
fn goals_by_user_newest(b: DbBackend) -> Vec<Statement> {
    let mut stmts = Vec::new();
    for (table, old, new) in [
        (
            "accounts_weekly_goals",
            "accounts_weekly_goals_user",
            "accounts_weekly_goals_user_created",
        ),
        (
            "accounts_yearly_goals",
            "accounts_yearly_goals_user",
            "accounts_yearly_goals_user_created",
        ),
    ] {
        let create = Index::create()
            .name(new)
            .table(table)
            .col("user_id")
            .col("created_at")
            .col("id")
            .to_owned();
        let drop = Index::drop().name(old).table(table).to_owned();
        stmts.extend(build_all(b, &[&create, &drop]));
    }
    stmts
}

/// A weekly goal may belong to one yearly goal (`yearly_goal_id`, cleared
/// when the yearly goal is deleted), and a user records the week of the
/// last weekly goals mail (`weekly_mail_week`, e.g. `2026-W48`).
///
/// Cost: two nullable columns added without a default, so neither table
/// is rewritten on either backend; PostgreSQL holds each table's
/// ACCESS EXCLUSIVE lock for the catalog change and scans
/// `accounts_weekly_goals` once to check the new foreign key (every value
/// is NULL), and builds the index on `yearly_goal_id` (a non-concurrent
/// build: writes to weekly goals wait for it).
fn weekly_in_yearly_and_weekly_mail(b: DbBackend) -> Vec<Statement> {
    let link = "ALTER TABLE accounts_weekly_goals ADD COLUMN yearly_goal_id VARCHAR(24) NULL \
                REFERENCES accounts_yearly_goals (id) ON DELETE SET NULL";
    let week = "ALTER TABLE accounts_users ADD COLUMN weekly_mail_week VARCHAR(10) NULL";
    let by_yearly = Index::create()
        .name("accounts_weekly_goals_yearly")
        .table("accounts_weekly_goals")
        .col("yearly_goal_id")
        .to_owned();
    let mut stmts = vec![
        Statement::from_string(b, link),
        Statement::from_string(b, week),
    ];
    stmts.extend(build_all(b, &[&by_yearly]));
    stmts
}

/// Passkeys (a user's WebAuthn credentials: the credential id, unique
/// across users, the public key as JSON, and the highest signature counter
/// a sign-in has shown)
/// and the ceremonies between a passkey start and its finish (single use,
/// until `expires_at`). Both go with their user.
///
/// Cost: two new tables and their indexes; nothing existing is touched.
fn passkeys(b: DbBackend) -> Vec<Statement> {
    let passkeys = Table::create()
        .table("accounts_passkeys")
        .col(id("id").primary_key())
        .col(id("user_id"))
        .col(ColumnDef::new("user_handle").string_len(36).not_null())
        .col(ColumnDef::new("credential_id").text().not_null())
        .col(ColumnDef::new("credential").text().not_null())
        .col(ColumnDef::new("name").string_len(64).not_null())
        .col(ColumnDef::new("sign_count").big_integer().not_null())
        .col(ts("created_at"))
        .col(ts_null("last_used_at"))
        .foreign_key(&mut owned_by_user("accounts_passkeys", "user_id"))
        .to_owned();
    let by_credential = Index::create()
        .name("accounts_passkeys_credential")
        .table("accounts_passkeys")
        .col("credential_id")
        .unique()
        .to_owned();
    let by_user = Index::create()
        .name("accounts_passkeys_user")
        .table("accounts_passkeys")
        .col("user_id")
        .to_owned();
    let by_handle = Index::create()
        .name("accounts_passkeys_handle")
        .table("accounts_passkeys")
        .col("user_handle")
        .to_owned();
    let ceremonies = Table::create()
        .table("accounts_passkey_ceremonies")
        .col(ColumnDef::new("id").string_len(32).not_null().primary_key())
        .col(string_null("user_id", 24))
        .col(ColumnDef::new("kind").string_len(16).not_null())
        .col(ColumnDef::new("state").text().not_null())
        .col(ts("expires_at"))
        .foreign_key(&mut owned_by_user("accounts_passkey_ceremonies", "user_id"))
        .to_owned();
    let by_expiry = Index::create()
        .name("accounts_passkey_ceremonies_expiry")
        .table("accounts_passkey_ceremonies")
        .col("expires_at")
        .to_owned();
    build_all(
        b,
        &[
            &passkeys,
            &by_credential,
            &by_user,
            &by_handle,
            &ceremonies,
            &by_expiry,
        ],
    )
}

/// A ban an operator set to end by itself (`NULL`: until lifted).
fn ban_until(b: DbBackend) -> Vec<Statement> {
    let alter = Table::alter()
        .table("accounts_users")
        .add_column(ts_null("banned_until"))
        .to_owned();
    build_all(b, &[&alter])
}
