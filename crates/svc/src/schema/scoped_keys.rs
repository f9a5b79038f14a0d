//! Migration 7: `Idempotency-Key`s scoped by who made the send, an svc
//! user (`user:<id>`) or an operator in the console (`operator:<id>`),
//! instead of by svc user alone (whose foreign key left operators none).
//! The table is made again with the new key and its rows copied over.

use keel_platform::migrate::build_all;
use keel_platform::migrate::col::{string as s, timestamp as ts};
use keel_platform::sea_orm::sea_query::{Index, Table};
use keel_platform::sea_orm::{DbBackend, Statement};

const NEW: &str = "svc_push_idempotency_scoped";

pub fn up(b: DbBackend) -> Vec<Statement> {
    let keys = Table::create()
        .table(NEW)
        .col(s("scope", 40))
        .col(s("idempotency_key", 255))
        .col(s("fingerprint", 64))
        .col(s("send_id", 36))
        .col(s("status", 16))
        .col(ts("created_at"))
        .primary_key(Index::create().col("scope").col("idempotency_key"))
        .to_owned();
    let mut all = build_all(b, &[&keys]);
    for sql in [
        format!(
            "INSERT INTO {NEW} (scope, idempotency_key, fingerprint, send_id, status, created_at) \
             SELECT 'user:' || user_id, idempotency_key, fingerprint, send_id, status, created_at \
             FROM svc_push_idempotency_keys"
        ),
        "DROP TABLE svc_push_idempotency_keys".to_owned(),
        format!("ALTER TABLE {NEW} RENAME TO svc_push_idempotency_keys"),
    ] {
        all.push(Statement::from_string(b, sql));
    }
    all
}
