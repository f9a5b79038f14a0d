//! Sends: who gets a notification and when, cancelling, progress.

use axum::http::StatusCode;
use chrono::{DateTime, Duration, NaiveTime, TimeZone, Utc};
use keel_platform::db::Db;
use keel_platform::jobs;
use keel_platform::sea_orm::sea_query::{Expr, Func, Query};
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, ExprTrait, QueryFilter,
    QueryOrder, QuerySelect, Set,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::deliver::Dispatch;
use super::devices::{invalid, missing, valid_push_token};
use crate::entity::{push_device, push_message, push_send};
use crate::error::Error;

/// Which active devices a send goes to; every filter given must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Target {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push_tokens: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SendRequest {
    pub title: String,
    pub body: String,
    pub data: Option<Map<String, Value>>,
    pub target: Target,
    pub send_at: Option<DateTime<Utc>>,
    pub local_time: Option<NaiveTime>,
}

fn string(
    body: &Map<String, Value>,
    field: &str,
    max: usize,
    required: bool,
) -> Result<Option<String>, Error> {
    match body.get(field) {
        None | Some(Value::Null) if required => Err(missing(field)),
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() && required => Err(missing(field)),
        Some(Value::String(s)) if s.chars().count() > max => {
            Err(invalid(field, &format!("must be at most {max} characters")))
        }
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(field, "must be a string")),
    }
}

impl SendRequest {
    pub fn parse(body: &Map<String, Value>) -> Result<Self, Error> {
        let title = string(body, "title", 200, true)?.unwrap_or_default();
        let text = string(body, "body", 2000, true)?.unwrap_or_default();
        let data = match body.get("data") {
            None | Some(Value::Null) => None,
            Some(Value::Object(o)) if Value::Object(o.clone()).to_string().len() <= 3072 => {
                Some(o.clone())
            }
            Some(Value::Object(_)) => {
                return Err(invalid("data", "must be at most 3072 bytes of JSON"));
            }
            Some(_) => return Err(invalid("data", "must be an object")),
        };
        let target = match body.get("target") {
            None | Some(Value::Null) => Target::default(),
            Some(Value::String(s)) if s == "all" => Target::default(),
            Some(Value::Object(o)) => parse_target(o)?,
            Some(_) => {
                return Err(invalid(
                    "target",
                    "must be an object of filters (or \"all\")",
                ));
            }
        };
        let send_at = match string(body, "send_at", 64, false)? {
            None => None,
            Some(raw) => Some(
                DateTime::parse_from_rfc3339(raw.trim())
                    .map_err(|_| {
                        invalid("send_at", "must be an ISO 8601 date-time with an offset")
                    })?
                    .with_timezone(&Utc),
            ),
        };
        let local_time = match string(body, "local_time", 5, false)? {
            None => None,
            Some(raw) => Some(
                parse_hhmm(&raw)
                    .ok_or_else(|| invalid("local_time", "must be HH:MM (00:00 to 23:59)"))?,
            ),
        };
        Ok(Self {
            title,
            body: text,
            data,
            target,
            send_at,
            local_time,
        })
    }
}

fn parse_hhmm(raw: &str) -> Option<NaiveTime> {
    let (h, m) = raw.split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    NaiveTime::from_hms_opt(h.parse().ok()?, m.parse().ok()?, 0)
}

fn parse_target(o: &Map<String, Value>) -> Result<Target, Error> {
    let known = ["device_type", "locale", "app_version", "push_tokens"];
    if let Some(k) = o.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(invalid("target", &format!("has an unknown filter {k:?}")));
    }
    let device_type = string(o, "device_type", 16, false)?;
    if device_type
        .as_deref()
        .is_some_and(|t| t != "ios" && t != "android")
    {
        return Err(invalid("target", "device_type must be ios or android"));
    }
    let push_tokens = match o.get("push_tokens") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) if items.len() <= 10_000 => {
            let tokens: Option<Vec<String>> = items
                .iter()
                .map(|v| {
                    v.as_str()
                        .filter(|t| valid_push_token(t))
                        .map(str::to_owned)
                })
                .collect();
            Some(tokens.ok_or_else(|| invalid("target", "push_tokens must be push tokens"))?)
        }
        Some(_) => {
            return Err(invalid(
                "target",
                "push_tokens must be an array of at most 10000 tokens",
            ));
        }
    };
    Ok(Target {
        device_type,
        locale: string(o, "locale", 35, false)?,
        app_version: string(o, "app_version", 50, false)?,
        push_tokens,
    })
}

/// The first moment on or after `from` when it is `at` in `tz` (UTC when
/// the device has no valid zone). A time skipped by a DST change moves to
/// the first moment after the gap.
pub fn next_local(from: DateTime<Utc>, at: NaiveTime, tz: Option<&str>) -> DateTime<Utc> {
    let tz: chrono_tz::Tz = tz.and_then(|t| t.parse().ok()).unwrap_or(chrono_tz::UTC);
    let local = from.with_timezone(&tz).date_naive();
    for day in 0..3 {
        let date = local + Duration::days(day);
        let naive = date.and_time(at);
        let moment = tz.from_local_datetime(&naive).earliest().or_else(|| {
            tz.from_local_datetime(&(naive + Duration::hours(1)))
                .earliest()
        });
        if let Some(m) = moment.map(|m| m.with_timezone(&Utc))
            && m >= from
        {
            return m;
        }
    }
    from
}

fn device_filter(target: &Target) -> keel_platform::sea_orm::Condition {
    use keel_platform::sea_orm::Condition;
    let mut c = Condition::all().add(push_device::Column::Active.eq(true));
    if let Some(t) = &target.device_type {
        c = c.add(push_device::Column::DeviceType.eq(t.as_str()));
    }
    if let Some(l) = &target.locale {
        c = c.add(push_device::Column::Locale.eq(l.as_str()));
    }
    if let Some(v) = &target.app_version {
        c = c.add(push_device::Column::AppVersion.eq(v.as_str()));
    }
    if let Some(tokens) = &target.push_tokens {
        c = c.add(push_device::Column::PushToken.is_in(tokens.iter().map(String::as_str)));
    }
    c
}

/// Records the send and one message per recipient, and schedules its
/// dispatch, in one transaction.
pub async fn create(db: &Db, req: SendRequest, user_id: i64) -> Result<push_send::Model, Error> {
    let now = Utc::now();
    let send_at = req.send_at.filter(|t| *t > now).unwrap_or(now);
    let id = uuid::Uuid::now_v7().to_string();
    let txn = db.begin_write().await?;
    let send = push_send::ActiveModel {
        id: Set(id.clone()),
        title: Set(req.title),
        body: Set(req.body),
        data: Set(req.data.map(|d| Value::Object(d).to_string())),
        target: Set(serde_json::to_string(&req.target).map_err(|e| Error::Internal(e.to_string()))?),
        send_at: Set(send_at),
        local_time: Set(req.local_time.map(|t| t.format("%H:%M").to_string())),
        recipients: Set(0),
        cancelled: Set(false),
        created_by: Set(user_id),
        created_at: Set(now),
    };
    push_send::Entity::insert(send)
        .exec_without_returning(&txn)
        .await?;
    let recipients = match req.local_time {
        None => add_recipients_at(&txn, &id, &req.target, send_at).await?,
        Some(at) => add_recipients_local(&txn, &id, &req.target, send_at, at).await?,
    };
    push_send::Entity::update_many()
        .col_expr(
            push_send::Column::Recipients,
            Expr::value(i64::try_from(recipients).unwrap_or(i64::MAX)),
        )
        .filter(push_send::Column::Id.eq(id.as_str()))
        .exec(&txn)
        .await?;
    if let Some(first) = earliest_pending(&txn, &id).await? {
        schedule_dispatch(&txn, &id, first).await?;
    }
    let saved = push_send::Entity::find_by_id(id.as_str())
        .one(&txn)
        .await?
        .ok_or_else(|| Error::Internal("the send vanished".to_owned()))?;
    txn.commit().await?;
    Ok(saved)
}

/// One `INSERT ... SELECT`: every matching device, due at once.
async fn add_recipients_at(
    txn: &DatabaseTransaction,
    send_id: &str,
    target: &Target,
    due: DateTime<Utc>,
) -> Result<u64, Error> {
    use push_device::Column as D;
    let select = Query::select()
        .expr(Expr::val(send_id))
        .column(D::PushToken)
        .expr(Expr::val(due))
        .expr(Expr::val("pending"))
        .from(push_device::Entity)
        .cond_where(device_filter(target))
        .to_owned();
    let insert = Query::insert()
        .into_table(push_message::Entity)
        .columns([
            push_message::Column::SendId,
            push_message::Column::PushToken,
            push_message::Column::DueAt,
            push_message::Column::Status,
        ])
        .select_from(select)
        .map_err(|e| Error::Internal(e.to_string()))?
        .to_owned();
    Ok(txn.execute(&insert).await?.rows_affected())
}

/// Devices in pages; each message due at the local time of its device.
async fn add_recipients_local(
    txn: &DatabaseTransaction,
    send_id: &str,
    target: &Target,
    from: DateTime<Utc>,
    at: NaiveTime,
) -> Result<u64, Error> {
    let mut after = String::new();
    let mut total = 0u64;
    loop {
        let page: Vec<(String, Option<String>)> = push_device::Entity::find()
            .select_only()
            .column(push_device::Column::PushToken)
            .column(push_device::Column::Timezone)
            .filter(device_filter(target))
            .filter(push_device::Column::PushToken.gt(after.as_str()))
            .order_by_asc(push_device::Column::PushToken)
            .limit(500)
            .into_tuple()
            .all(txn)
            .await?;
        let Some(last) = page.last() else { break };
        after = last.0.clone();
        total += u64::try_from(page.len()).unwrap_or(0);
        let rows = page
            .into_iter()
            .map(|(token, tz)| push_message::ActiveModel {
                send_id: Set(send_id.to_owned()),
                due_at: Set(next_local(from, at, tz.as_deref())),
                push_token: Set(token),
                status: Set("pending".to_owned()),
                batch_id: Set(None),
                ticket_id: Set(None),
                ticket_error: Set(None),
                sent_at: Set(None),
                receipt_status: Set(None),
                receipt_error: Set(None),
            });
        push_message::Entity::insert_many(rows)
            .exec_without_returning(txn)
            .await?;
    }
    Ok(total)
}

pub async fn earliest_pending<C: ConnectionTrait>(
    conn: &C,
    send_id: &str,
) -> Result<Option<DateTime<Utc>>, Error> {
    let row: Option<Option<DateTime<Utc>>> = push_message::Entity::find()
        .select_only()
        .expr_as(Func::min(Expr::col(push_message::Column::DueAt)), "first")
        .filter(push_message::Column::SendId.eq(send_id))
        .filter(push_message::Column::Status.eq("pending"))
        .into_tuple()
        .one(conn)
        .await?;
    Ok(row.flatten())
}

pub async fn schedule_dispatch<C: ConnectionTrait>(
    conn: &C,
    send_id: &str,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    let key = format!("dispatch:{send_id}:{}", at.timestamp());
    jobs::enqueue_unique(
        conn,
        &Dispatch {
            send_id: send_id.to_owned(),
        },
        &key,
        at,
    )
    .await?;
    Ok(())
}

/// Cancels what has not been handed to Expo yet; how many messages.
pub async fn cancel(db: &Db, send_id: &str) -> Result<u64, Error> {
    let txn = db.begin_write().await?;
    let send = push_send::Entity::find_by_id(send_id)
        .one(&txn)
        .await?
        .ok_or_else(not_found)?;
    if send.cancelled {
        return Err(not_cancellable("The send is already cancelled"));
    }
    let res = push_message::Entity::update_many()
        .col_expr(push_message::Column::Status, Expr::value("cancelled"))
        .filter(push_message::Column::SendId.eq(send_id))
        .filter(push_message::Column::Status.eq("pending"))
        .exec(&txn)
        .await?;
    if res.rows_affected == 0 && send.recipients > 0 {
        return Err(not_cancellable(
            "Every message of this send has been handed over already",
        ));
    }
    push_send::Entity::update_many()
        .col_expr(push_send::Column::Cancelled, Expr::value(true))
        .filter(push_send::Column::Id.eq(send_id))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(res.rows_affected)
}

pub fn not_found() -> Error {
    Error::api(
        StatusCode::NOT_FOUND,
        "svc_push_send_not_found",
        "No such send",
    )
}

fn not_cancellable(message: &str) -> Error {
    Error::api(StatusCode::CONFLICT, "svc_push_not_cancellable", message)
}

/// How far a send has come.
#[derive(Debug, Default, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct Progress {
    /// Not yet due, or due and waiting for a batch.
    pub pending: u64,
    /// In a batch on its way to Expo.
    pub queued: u64,
    /// Accepted by Expo (ticket ok).
    pub sent: u64,
    /// Refused (ticket error, or the request was).
    pub failed: u64,
    pub cancelled: u64,
    pub receipts_ok: u64,
    pub receipts_error: u64,
}

pub async fn progress(db: &Db, send_id: &str) -> Result<Progress, Error> {
    let by_status: Vec<(String, i64)> = push_message::Entity::find()
        .select_only()
        .column(push_message::Column::Status)
        .column_as(Expr::col(push_message::Column::PushToken).count(), "n")
        .filter(push_message::Column::SendId.eq(send_id))
        .group_by(push_message::Column::Status)
        .into_tuple()
        .all(db.read())
        .await?;
    let by_receipt: Vec<(Option<String>, i64)> = push_message::Entity::find()
        .select_only()
        .column(push_message::Column::ReceiptStatus)
        .column_as(Expr::col(push_message::Column::PushToken).count(), "n")
        .filter(push_message::Column::SendId.eq(send_id))
        .filter(push_message::Column::ReceiptStatus.is_not_null())
        .group_by(push_message::Column::ReceiptStatus)
        .into_tuple()
        .all(db.read())
        .await?;
    let mut p = Progress::default();
    for (status, n) in by_status {
        let n = u64::try_from(n).unwrap_or(0);
        match status.as_str() {
            "pending" => p.pending = n,
            "batched" => p.queued = n,
            "sent" => p.sent = n,
            "error" => p.failed = n,
            "cancelled" => p.cancelled = n,
            _ => {}
        }
    }
    for (status, n) in by_receipt {
        let n = u64::try_from(n).unwrap_or(0);
        match status.as_deref() {
            Some("ok") => p.receipts_ok = n,
            Some(_) => p.receipts_error += n,
            None => {}
        }
    }
    Ok(p)
}

/// `scheduled`, `queued`, `sending`, `sent` or `cancelled`.
pub fn status_of(send: &push_send::Model, p: &Progress, now: DateTime<Utc>) -> &'static str {
    if send.cancelled {
        "cancelled"
    } else if p.pending == 0 && p.queued == 0 {
        "sent"
    } else if p.sent + p.failed + p.queued > 0 {
        "sending"
    } else if send.send_at > now || send.local_time.is_some() {
        "scheduled"
    } else {
        "queued"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn local_time_is_the_next_such_moment_in_the_devices_zone() {
        let nine = NaiveTime::from_hms_opt(9, 0, 0).unwrap();
        let from = at("2026-06-01T12:00:00Z");
        assert_eq!(
            next_local(from, nine, Some("Europe/Berlin")),
            at("2026-06-02T07:00:00Z")
        );
        assert_eq!(
            next_local(from, nine, Some("America/Los_Angeles")),
            at("2026-06-01T16:00:00Z")
        );
        assert_eq!(next_local(from, nine, None), at("2026-06-02T09:00:00Z"));
        assert_eq!(
            next_local(from, nine, Some("Not/AZone")),
            at("2026-06-02T09:00:00Z")
        );
    }

    #[test]
    fn a_time_skipped_by_dst_moves_past_the_gap() {
        let half_two = NaiveTime::from_hms_opt(2, 30, 0).unwrap();
        // 2026-03-29 02:30 does not exist in Berlin.
        let from = at("2026-03-28T12:00:00Z");
        assert_eq!(
            next_local(from, half_two, Some("Europe/Berlin")),
            at("2026-03-29T01:30:00Z")
        );
    }

    #[test]
    fn send_requests_are_checked_field_by_field() {
        let body = |v: Value| v.as_object().cloned().unwrap();
        assert!(SendRequest::parse(&body(serde_json::json!({"title": "t", "body": "b"}))).is_ok());
        for bad in [
            serde_json::json!({"body": "b"}),
            serde_json::json!({"title": "t", "body": "b", "data": [1]}),
            serde_json::json!({"title": "t", "body": "b", "send_at": "tomorrow"}),
            serde_json::json!({"title": "t", "body": "b", "local_time": "9:00"}),
            serde_json::json!({"title": "t", "body": "b", "target": {"device_type": "windows"}}),
            serde_json::json!({"title": "t", "body": "b", "target": {"nope": 1}}),
        ] {
            assert!(SendRequest::parse(&body(bad.clone())).is_err(), "{bad}");
        }
    }
}
