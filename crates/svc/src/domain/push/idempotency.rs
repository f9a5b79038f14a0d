//! `Idempotency-Key` on `POST /send` (as Stripe's API and the IETF
//! `Idempotency-Key` header draft have it): the same key from the same
//! admin within 24 hours answers the first send's answer and sends nothing
//! more; the same key with another request is refused. The key's row is
//! written first in the send's own transaction, so two retries arriving
//! together make one send: the second waits on the first's row (its
//! primary key) and then reads it.

use chrono::{Duration, Utc};
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{
    ColumnTrait, DatabaseTransaction, DbErr, EntityTrait, QueryFilter, Set,
};
use serde_json::Value;

use super::progress::SendStatus;
use super::request::SendRequest;
use crate::entity::push_idempotency_key::{ActiveModel, Column, Entity};

/// How long a key is remembered.
pub const KEPT: Duration = Duration::hours(24);

/// A client's key: 1 to 255 visible ASCII characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("Idempotency-Key must be 1 to 255 visible ASCII characters")]
pub struct InvalidKey;

impl IdempotencyKey {
    pub fn parse(raw: &[u8]) -> Result<Self, InvalidKey> {
        let ok =
            !raw.is_empty() && raw.len() <= 255 && raw.iter().all(|b| (0x21..=0x7e).contains(b));
        let text = std::str::from_utf8(raw).map_err(|_| InvalidKey)?;
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(InvalidKey)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a key found when claimed.
pub enum Claimed {
    /// Unused (or older than a day): this request makes the send.
    Fresh,
    /// The same request was made with it: its send and first answer.
    Replay { send_id: String, status: SendStatus },
    /// Another request was made with it.
    Mismatch,
}

/// The request in a canonical form (object keys sorted, whatever format
/// it came in), hashed: what "the same request" means.
pub fn fingerprint(req: &SendRequest) -> String {
    let value = serde_json::json!({
        "title": req.title,
        "body": req.body,
        "data": req.data,
        "target": req.target,
        "send_at": req.send_at.map(|t| t.to_rfc3339()),
        "local_time": req.local_time.map(|t| t.format("%H:%M").to_string()),
    });
    keel_platform::crypto::sha256_hex(canonical(&value).as_bytes())
}

fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// Who sends, and so whose keys are looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    /// One of svc's users (by id).
    User(i64),
    /// An operator in the console (by id).
    Operator(i64),
}

impl Sender {
    /// The scope of the sender's keys: `user:<id>` or `operator:<id>`.
    pub fn scope(self) -> String {
        match self {
            Sender::User(id) => format!("user:{id}"),
            Sender::Operator(id) => format!("operator:{id}"),
        }
    }

    /// The svc user a send records as its maker: 0 for an operator (the
    /// audit log names them).
    pub fn user_id(self) -> i64 {
        match self {
            Sender::User(id) => id,
            Sender::Operator(_) => 0,
        }
    }
}

/// Claims `key` for the send `send_id` in `txn` (the send's own), or says
/// what an earlier request with it made. Forgets the sender's keys older
/// than [`KEPT`] first.
pub async fn claim(
    txn: &DatabaseTransaction,
    sender: Sender,
    key: &IdempotencyKey,
    fingerprint: &str,
    send_id: &str,
) -> Result<Claimed, DbErr> {
    let now = Utc::now();
    let scope = sender.scope();
    Entity::delete_many()
        .filter(Column::Scope.eq(scope.as_str()))
        .filter(Column::CreatedAt.lt(now - KEPT))
        .exec(txn)
        .await?;
    let row = ActiveModel {
        scope: Set(scope.clone()),
        idempotency_key: Set(key.0.clone()),
        fingerprint: Set(fingerprint.to_owned()),
        send_id: Set(send_id.to_owned()),
        status: Set(String::new()),
        created_at: Set(now),
    };
    let inserted = Entity::insert(row)
        .on_conflict(
            OnConflict::columns([Column::Scope, Column::IdempotencyKey])
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(txn)
        .await?;
    if inserted == 1 {
        return Ok(Claimed::Fresh);
    }
    let earlier = Entity::find_by_id((scope, key.0.clone()))
        .one(txn)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound("the idempotency key vanished".into()))?;
    if earlier.fingerprint != fingerprint {
        return Ok(Claimed::Mismatch);
    }
    let status = serde_json::from_value(Value::String(earlier.status))
        .map_err(|e| DbErr::Json(e.to_string()))?;
    Ok(Claimed::Replay {
        send_id: earlier.send_id,
        status,
    })
}

/// Forgets every admin's keys older than [`KEPT`] at `now`; how many.
pub async fn purge_expired(
    db: &keel_platform::db::Db,
    now: chrono::DateTime<Utc>,
) -> Result<u64, DbErr> {
    Ok(Entity::delete_many()
        .filter(Column::CreatedAt.lt(now - KEPT))
        .exec(db.write())
        .await?
        .rows_affected)
}

/// Records the first answer's status under `key` (same transaction).
pub async fn settle(
    txn: &DatabaseTransaction,
    sender: Sender,
    key: &IdempotencyKey,
    status: SendStatus,
) -> Result<(), DbErr> {
    let status = serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    Entity::update_many()
        .col_expr(
            Column::Status,
            keel_platform::sea_orm::sea_query::Expr::value(status),
        )
        .filter(Column::Scope.eq(sender.scope()))
        .filter(Column::IdempotencyKey.eq(key.0.as_str()))
        .exec(txn)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_1_to_255_visible_ascii_characters() {
        assert!(IdempotencyKey::parse(b"a").is_ok());
        assert!(IdempotencyKey::parse(&[b'k'; 255]).is_ok());
        assert!(IdempotencyKey::parse(b"8e03978e-40d5-43e8-bc93-6894a57f9324").is_ok());
        for bad in [
            &b""[..],
            &[b'k'; 256][..],
            b"with space",
            b"tab\t",
            "é".as_bytes(),
        ] {
            assert!(IdempotencyKey::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_canonical_form_sorts_keys_at_every_depth() {
        let a = serde_json::json!({"b": 1, "a": {"y": [1, {"d": 1, "c": 2}], "x": "s"}});
        let b = serde_json::json!({"a": {"x": "s", "y": [1, {"c": 2, "d": 1}]}, "b": 1});
        assert_eq!(canonical(&a), canonical(&b));
        assert_ne!(canonical(&a), canonical(&serde_json::json!({"b": 2})));
    }
}
