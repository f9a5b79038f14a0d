//! The svc tables (forms and the host site; push adds its own).

mod scoped_keys;

use keel_platform::migrate::col::{serial, string as s, string_null as null_text, timestamp as ts};
use keel_platform::migrate::{Migration, MigrationSet, build_all};
use keel_platform::sea_orm::sea_query::{
    ColumnDef, ConditionalStatement, Expr, ExprTrait, ForeignKey, ForeignKeyAction, Index, Table,
};
use keel_platform::sea_orm::{DbBackend, Statement};

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "svc",
    migrations: &[
        Migration {
            version: 0,
            name: "site_users_forms",
            up: site_users_forms,
        },
        Migration {
            version: 1,
            name: "push",
            up: push,
        },
        Migration {
            version: 2,
            name: "push_message_partial_indexes",
            up: push_message_partial_indexes,
        },
        Migration {
            version: 3,
            name: "push_message_batch_index_partial",
            up: push_message_batch_index_partial,
        },
        Migration {
            version: 4,
            name: "push_send_counts",
            up: push_send_counts,
        },
        Migration {
            version: 5,
            name: "push_idempotency_keys",
            up: push_idempotency_keys,
        },
        Migration {
            version: 6,
            name: "admins_disabled_audit_to_platform",
            up: admins_disabled_audit_to_platform,
        },
        Migration {
            version: 7,
            name: "push_idempotency_keys_scoped",
            up: scoped_keys::up,
        },
    ],
    tables: crate::entity::tables,
};

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

fn push(b: DbBackend) -> Vec<Statement> {
    let devices = Table::create()
        .table("svc_push_devices")
        .col(s("push_token", 255).primary_key())
        .col(s("device_type", 16))
        .col(null_text("device_model", 100))
        .col(null_text("os_version", 50))
        .col(null_text("app_version", 50))
        .col(null_text("locale", 35))
        .col(null_text("timezone", 64))
        .col(null_text("user_label", 255))
        .col(ColumnDef::new("active").boolean().not_null())
        .col(null_text("inactive_reason", 64))
        .col(s("app_id", 255))
        .col(ts("registered_at"))
        .col(ts("updated_at"))
        .to_owned();
    let active_devices = Index::create()
        .name("svc_push_devices_active")
        .table("svc_push_devices")
        .col("active")
        .col("device_type")
        .to_owned();
    let sends = Table::create()
        .table("svc_push_sends")
        .col(s("id", 36).primary_key())
        .col(s("title", 200))
        .col(ColumnDef::new("body").text().not_null())
        .col(ColumnDef::new("data").text().null())
        .col(ColumnDef::new("target").text().not_null())
        .col(ts("send_at"))
        .col(null_text("local_time", 5))
        .col(ColumnDef::new("recipients").big_integer().not_null())
        .col(ColumnDef::new("cancelled").boolean().not_null())
        .col(ColumnDef::new("created_by").big_integer().not_null())
        .col(ts("created_at"))
        .to_owned();
    let messages = Table::create()
        .table("svc_push_messages")
        .col(s("send_id", 36))
        .col(s("push_token", 255))
        .col(ts("due_at"))
        .col(s("status", 16))
        .col(null_text("batch_id", 36))
        .col(null_text("ticket_id", 100))
        .col(null_text("ticket_error", 64))
        .col(ColumnDef::new("sent_at").timestamp_with_time_zone().null())
        .col(null_text("receipt_status", 8))
        .col(null_text("receipt_error", 64))
        .primary_key(Index::create().col("send_id").col("push_token"))
        .to_owned();
    let due = Index::create()
        .name("svc_push_messages_due")
        .table("svc_push_messages")
        .col("send_id")
        .col("status")
        .col("due_at")
        .to_owned();
    let batches = Index::create()
        .name("svc_push_messages_batch")
        .table("svc_push_messages")
        .col("batch_id")
        .to_owned();
    build_all(
        b,
        &[&devices, &active_devices, &sends, &messages, &due, &batches],
    )
}

/// Replaces the (send_id, status, due_at) index with two partial ones. The
/// full index let SQLite batch a message by scanning every pending message
/// of its send instead of looking it up by key, and made asking for
/// receipts walk every sent message; partial indexes hold only the rows
/// those queries want and shrink as a send progresses.
fn push_message_partial_indexes(b: DbBackend) -> Vec<Statement> {
    let drop_due = Index::drop()
        .name("svc_push_messages_due")
        .table("svc_push_messages")
        .to_owned();
    let pending = Index::create()
        .name("svc_push_messages_pending")
        .table("svc_push_messages")
        .col("send_id")
        .col("due_at")
        .and_where(Expr::col("status").eq("pending"))
        .to_owned();
    let awaiting_receipt = Index::create()
        .name("svc_push_messages_awaiting_receipt")
        .table("svc_push_messages")
        .col("send_id")
        .col("push_token")
        .and_where(Expr::col("status").eq("sent"))
        .and_where(Expr::col("receipt_status").is_null())
        .to_owned();
    build_all(b, &[&drop_due, &pending, &awaiting_receipt])
}

/// The batch index holds only batched messages: every message was entered
/// in it at the send's insert with a NULL batch id, which no query looks
/// for (100,000 entries written for nothing by a send to 100,000 devices).
/// `batch_id = ?` implies `batch_id IS NOT NULL`, so both backends use it.
fn push_message_batch_index_partial(b: DbBackend) -> Vec<Statement> {
    let drop_batch = Index::drop()
        .name("svc_push_messages_batch")
        .table("svc_push_messages")
        .to_owned();
    let batch = Index::create()
        .name("svc_push_messages_batch")
        .table("svc_push_messages")
        .col("batch_id")
        .and_where(Expr::col("batch_id").is_not_null())
        .to_owned();
    let mut all = build_all(b, &[&drop_batch, &batch]);
    // A send due at once names its batches `<send id>:<n>`, longer than the
    // 36 characters of a UUID (SQLite does not hold a text to its length).
    if b == DbBackend::Postgres {
        all.push(Statement::from_string(
            b,
            "ALTER TABLE svc_push_messages ALTER COLUMN batch_id TYPE varchar(64)",
        ));
    }
    all
}

/// Each send counts its messages by status and receipt (GET /send/{id}
/// read them all: 0.5 s for a send to 1,000,000 devices on SQLite).
/// Cost: eight columns added, and the messages table read once, grouped by
/// send, to fill them (about as long as counting it).
fn push_send_counts(b: DbBackend) -> Vec<Statement> {
    let mut all: Vec<Statement> = SEND_COUNTS
        .iter()
        .map(|(column, _)| {
            Statement::from_string(
                b,
                format!("ALTER TABLE svc_push_sends ADD COLUMN {column} BIGINT NOT NULL DEFAULT 0"),
            )
        })
        .collect();
    let sets: Vec<String> = SEND_COUNTS
        .iter()
        .map(|(column, _)| format!("{column} = c.{column}"))
        .collect();
    let sums: Vec<String> = SEND_COUNTS
        .iter()
        .map(|(column, condition)| {
            format!("SUM(CASE WHEN {condition} THEN 1 ELSE 0 END) AS {column}")
        })
        .collect();
    all.push(Statement::from_string(
        b,
        format!(
            "UPDATE svc_push_sends SET {} FROM (SELECT m.send_id, {} FROM svc_push_messages m \
             GROUP BY m.send_id) AS c WHERE svc_push_sends.id = c.send_id",
            sets.join(", "),
            sums.join(", ")
        ),
    ));
    all
}

/// The counts each send keeps, and which messages each counts.
const SEND_COUNTS: [(&str, &str); 8] = [
    ("n_pending", "m.status = 'pending'"),
    ("n_queued", "m.status = 'batched'"),
    ("n_sent", "m.status = 'sent'"),
    ("n_failed", "m.status = 'error'"),
    ("n_cancelled", "m.status = 'cancelled'"),
    ("n_skipped", "m.status = 'skipped'"),
    ("n_receipts_ok", "m.receipt_status = 'ok'"),
    ("n_receipts_error", "m.receipt_status = 'error'"),
];

/// The `Idempotency-Key`s of `POST /send`: one row per admin and key, kept
/// 24 hours (a new table; nothing is rewritten).
fn push_idempotency_keys(b: DbBackend) -> Vec<Statement> {
    let keys = Table::create()
        .table("svc_push_idempotency_keys")
        .col(ColumnDef::new("user_id").big_integer().not_null())
        .col(s("idempotency_key", 255))
        .col(s("fingerprint", 64))
        .col(s("send_id", 36))
        .col(s("status", 16))
        .col(ts("created_at"))
        .primary_key(Index::create().col("user_id").col("idempotency_key"))
        .foreign_key(
            &mut ForeignKey::create()
                .from("svc_push_idempotency_keys", "user_id")
                .to("svc_users", "id")
                .on_delete(ForeignKeyAction::Cascade)
                .to_owned(),
        )
        .to_owned();
    build_all(b, &[&keys])
}

/// An admin may be disabled (kept, refused at every door); svc's audit
/// entries move to the platform's one log (`keel_audit`), App Check's as
/// the app (actor) and the form (subject) with the token's hash. The old
/// table stays, empty, until a later release drops it. Copies every audit
/// row once (a statement per table, no per-row work).
fn admins_disabled_audit_to_platform(b: DbBackend) -> Vec<Statement> {
    let disabled = Table::alter()
        .table("svc_users")
        .add_column(
            ColumnDef::new("disabled_at")
                .timestamp_with_time_zone()
                .null(),
        )
        .to_owned();
    let mut all = build_all(b, &[&disabled]);
    all.push(Statement::from_string(
        b,
        "INSERT INTO keel_audit (at, service, actor, action, subject, detail) \
         SELECT created_at, 'svc', app_id, event, form_id, \
         '{\"token_hash\":\"' || token_hash || '\"}' FROM svc_audit ORDER BY id",
    ));
    all.push(Statement::from_string(b, "DELETE FROM svc_audit"));
    all
}
