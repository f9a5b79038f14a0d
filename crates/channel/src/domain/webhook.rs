//! The provider's webhook: verified (`X-Api-Key`, and `X-Signature`, the
//! hex HMAC-SHA256 of the raw body with the API secret, over the
//! uncompressed bytes when the body is gzip), then applied to the live
//! state. Handling is idempotent by state (a live start when already live
//! changes nothing), so a redelivery, or the same event at two nodes,
//! has one effect.
//!
//! A delivery's `X-Webhook-Id` counts as seen in the same transaction as
//! its effect: a delivery that fails half-way (a database error, a crash)
//! leaves no trace, and the provider's retry of it is applied, not
//! answered "duplicate".

use std::io::Read;

use chrono::{DateTime, Utc};
use hmac::{Hmac, KeyInit, Mac};
use keel_platform::crypto::constant_time_eq;
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{
    ColumnTrait, DatabaseTransaction, DbErr, EntityTrait, QueryFilter, Set,
};
use serde_json::Value;
use sha2::Sha256;

use super::live;
use crate::config::NotifyConfig;
use crate::entity::{channel_config, webhook_seen};
use crate::getstream::{self, CALL_TYPE};

/// The longest `X-Webhook-Id` remembered; a longer one is handled without
/// redelivery detection (idempotent by state all the same).
pub const MAX_DELIVERY_ID: usize = 100;
/// How long a delivery id is remembered.
const SEEN_FOR: chrono::Duration = chrono::Duration::days(2);

/// The largest body accepted, uncompressed.
pub const MAX_BODY: usize = 1024 * 1024;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WebhookError {
    #[error("{0}")]
    Unauthorized(&'static str),
    #[error("{0}")]
    BadBody(String),
}

/// The body, once the key and the signature check out.
pub fn verify(
    raw: &[u8],
    signature: Option<&str>,
    api_key: Option<&str>,
    key: &str,
    secret: &[u8],
) -> Result<Vec<u8>, WebhookError> {
    let given_key = api_key.ok_or(WebhookError::Unauthorized("X-Api-Key is missing"))?;
    if !constant_time_eq(given_key.as_bytes(), key.as_bytes()) {
        return Err(WebhookError::Unauthorized(
            "X-Api-Key is not this app's key",
        ));
    }
    let given = signature
        .map(|s| s.trim().to_ascii_lowercase())
        .ok_or(WebhookError::Unauthorized("X-Signature is missing"))?;
    let body = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw)
            .take(u64::try_from(MAX_BODY).unwrap_or(u64::MAX) + 1)
            .read_to_end(&mut out)
            .map_err(|e| WebhookError::BadBody(format!("the gzip body is broken: {e}")))?;
        if out.len() > MAX_BODY {
            return Err(WebhookError::BadBody("the body is too large".to_owned()));
        }
        out
    } else {
        raw.to_vec()
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret)
        .map_err(|_| WebhookError::Unauthorized("no API secret"))?;
    mac.update(&body);
    let expected = hex::encode(mac.finalize().into_bytes());
    if !constant_time_eq(given.as_bytes(), expected.as_bytes()) {
        return Err(WebhookError::Unauthorized(
            "X-Signature does not match the body",
        ));
    }
    Ok(body)
}

/// What an event did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// The stream went live: this session opened.
    LiveStarted(String),
    /// The stream ended: this session closed.
    Ended(String),
    /// The viewer count changed.
    Viewers(i64),
    /// Not about our call, not a type we act on, or nothing to change.
    Nothing,
}

/// What a delivery did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// This delivery id was applied before.
    Duplicate,
    Applied(Effect),
}

/// Receives a verified event: applies it and, when the delivery has an
/// id, records the id, both in one transaction.
pub async fn receive(
    db: &Db,
    delivery: Option<&str>,
    event: &Value,
    notify: &NotifyConfig,
) -> Result<Outcome, DbErr> {
    let txn = db.begin_write().await?;
    if let Some(id) = delivery.filter(|id| id.len() <= MAX_DELIVERY_ID)
        && !first_delivery(&txn, id).await?
    {
        return Ok(Outcome::Duplicate);
    }
    let ours = channel_config::Entity::find_by_id(channel_config::ID)
        .one(&txn)
        .await?
        .and_then(|c| c.stream_call_id)
        .map(|id| format!("{CALL_TYPE}:{id}"));
    let effect = apply(&txn, ours.as_deref(), event, notify).await?;
    txn.commit().await?;
    Ok(Outcome::Applied(effect))
}

/// Records a delivery id; false when it was recorded before. On
/// PostgreSQL a concurrent delivery of the same id waits here for the
/// first one's transaction, and is a duplicate only if that one commits.
async fn first_delivery(txn: &DatabaseTransaction, id: &str) -> Result<bool, DbErr> {
    let inserted = webhook_seen::Entity::insert(webhook_seen::ActiveModel {
        webhook_id: Set(id.to_owned()),
        received_at: Set(Utc::now()),
    })
    .on_conflict(
        OnConflict::column(webhook_seen::Column::WebhookId)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(txn)
    .await?;
    Ok(inserted > 0)
}

/// Forgets delivery ids older than the provider's retry window.
pub async fn prune_seen(db: &Db, now: DateTime<Utc>) -> Result<u64, DbErr> {
    let res = webhook_seen::Entity::delete_many()
        .filter(webhook_seen::Column::ReceivedAt.lt(now - SEEN_FOR))
        .exec(db.write())
        .await?;
    Ok(res.rows_affected)
}

/// Applies a verified event in `txn`. `our_call` is the provisioned
/// call's cid.
async fn apply(
    txn: &DatabaseTransaction,
    our_call: Option<&str>,
    event: &Value,
    notify: &NotifyConfig,
) -> Result<Effect, DbErr> {
    let kind = event["type"].as_str().unwrap_or_default();
    let cid = event["call_cid"]
        .as_str()
        .or_else(|| event["call"]["cid"].as_str());
    let (Some(ours), Some(cid)) = (our_call, cid) else {
        return Ok(Effect::Nothing);
    };
    if ours != cid {
        return Ok(Effect::Nothing);
    }
    let at = event["created_at"]
        .as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map_or_else(Utc::now, |t| t.with_timezone(&Utc));
    let ended = matches!(kind, "call.session_ended" | "call.ended")
        || (kind == "call.updated" && event["call"]["backstage"].as_bool() == Some(true));
    let effect = match kind {
        "call.live_started" => {
            let viewers = getstream::viewers(&event["call"]["session"]);
            let notify_at = at + chrono::Duration::from_std(notify.delay).unwrap_or_default();
            live::start(txn, cid, at, viewers, notify_at)
                .await?
                .map_or(Effect::Nothing, Effect::LiveStarted)
        }
        _ if ended => live::end(txn, at)
            .await?
            .map_or(Effect::Nothing, Effect::Ended),
        "call.session_participant_count_updated" => {
            let session = channel_config::Entity::find_by_id(channel_config::ID)
                .one(txn)
                .await?
                .and_then(|c| c.live_session_id);
            match session {
                Some(session) => {
                    let n = getstream::viewers(event);
                    live::set_viewers(txn, &session, n).await?;
                    Effect::Viewers(n)
                }
                None => Effect::Nothing,
            }
        }
        _ => Effect::Nothing,
    };
    Ok(effect)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(secret: &[u8], body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap_or_else(|e| panic!("{e}"));
        mac.update(body);
        hex::encode(mac.finalize().into_bytes())
    }

    #[test]
    fn the_key_and_the_signature_must_match() {
        let body = br#"{"type":"call.live_started"}"#;
        let sig = sign(b"s3cret", body);
        assert_eq!(
            verify(body, Some(&sig), Some("key"), "key", b"s3cret").as_deref(),
            Ok(&body[..])
        );
        assert!(
            verify(
                body,
                Some(&sig.to_uppercase()),
                Some("key"),
                "key",
                b"s3cret"
            )
            .is_ok()
        );
        assert!(verify(body, Some(&sig), Some("other"), "key", b"s3cret").is_err());
        assert!(verify(body, None, Some("key"), "key", b"s3cret").is_err());
        assert!(verify(body, Some(&sig), None, "key", b"s3cret").is_err());
        assert!(verify(b"{}", Some(&sig), Some("key"), "key", b"s3cret").is_err());
    }

    #[test]
    fn a_gzip_body_is_verified_over_its_uncompressed_bytes() {
        use std::io::Write;
        let body = br#"{"type":"call.ended"}"#;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(body).unwrap_or_else(|e| panic!("{e}"));
        let raw = gz.finish().unwrap_or_else(|e| panic!("{e}"));
        let sig = sign(b"s3cret", body);
        assert_eq!(
            verify(&raw, Some(&sig), Some("k"), "k", b"s3cret").as_deref(),
            Ok(&body[..])
        );
        let over_compressed = sign(b"s3cret", &raw);
        assert!(verify(&raw, Some(&over_compressed), Some("k"), "k", b"s3cret").is_err());
    }
}
