//! A usage event, defined once: the `UsageEventPayload` as it comes
//! in (POST /event), as it is stored, and as it goes out in GET /history.

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::db::inline::Miss;
use keel_platform::sea_orm::{
    ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Select, Set,
};
use keel_platform::time::millis;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::values::{Amount, Count, IsoTimestamp, Text};
use crate::entity::event;

/// Why a page of history could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Db(#[from] DbErr),
    #[error(transparent)]
    Write(#[from] keel_platform::http::json::JsonError),
}

/// The UsageEventPayload (body of POST /event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageEvent {
    /// Identifier of the usage session.
    #[schema(value_type = String, min_length = 1, max_length = 255, pattern = r"\S")]
    pub session_id: Text<255>,
    /// ISO 8601.
    #[schema(value_type = String, format = DateTime)]
    pub timestamp: IsoTimestamp,
    #[schema(value_type = String, min_length = 1, max_length = 255, pattern = r"\S")]
    pub model: Text<255>,
    #[schema(value_type = u64, maximum = 1_000_000_000)]
    pub input_tokens: Count,
    #[schema(value_type = u64, maximum = 1_000_000_000)]
    pub output_tokens: Count,
    #[schema(value_type = u64, maximum = 1_000_000_000)]
    pub cache_read_tokens: Count,
    #[schema(value_type = u64, maximum = 1_000_000_000)]
    pub cache_write_tokens: Count,
    /// Cost of this event in USD.
    #[serde(rename = "costUSD")]
    #[schema(value_type = f64, minimum = 0, maximum = 1_000_000)]
    pub cost_usd: Amount,
}

/// Every field of the payload is required, in the documented order.
pub const REQUIRED: [&str; 8] = [
    "sessionId",
    "timestamp",
    "model",
    "inputTokens",
    "outputTokens",
    "cacheReadTokens",
    "cacheWriteTokens",
    "costUSD",
];

impl UsageEvent {
    /// Every kind of token of the event.
    pub fn tokens(&self) -> i64 {
        self.input_tokens
            .get()
            .saturating_add(self.output_tokens.get())
            .saturating_add(self.cache_read_tokens.get())
            .saturating_add(self.cache_write_tokens.get())
    }

    pub fn cost(&self) -> f64 {
        self.cost_usd.get()
    }
}

/// An event of a user, on its way to the store.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub user_id: String,
    pub event: UsageEvent,
}

impl NewEvent {
    /// Its row, arriving `now`.
    pub fn row(&self, now: DateTime<Utc>) -> event::ActiveModel {
        let e = &self.event;
        event::ActiveModel {
            id: Set(uuid::Uuid::now_v7().to_string()),
            user_id: Set(self.user_id.clone()),
            session_id: Set(e.session_id.as_str().to_owned()),
            timestamp: Set(e.timestamp.as_str().to_owned()),
            model: Set(e.model.as_str().to_owned()),
            input_tokens: Set(e.input_tokens.get()),
            output_tokens: Set(e.output_tokens.get()),
            cache_read_tokens: Set(e.cache_read_tokens.get()),
            cache_write_tokens: Set(e.cache_write_tokens.get()),
            cost_usd: Set(e.cost()),
            created_at: Set(now),
            ..Default::default()
        }
    }
}

/// A stored event as GET /history sends it (a StoredEvent): the
/// payload's fields plus `id`, `userId` and `createdAt`, in this order.
/// Borrowed, so a page can be written straight from the database's rows;
/// both reads below write this one type.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredEvent<'a> {
    pub id: &'a str,
    pub user_id: &'a str,
    /// Identifier of the usage session.
    pub session_id: &'a str,
    /// As submitted (ISO 8601).
    #[schema(format = DateTime)]
    pub timestamp: &'a str,
    pub model: &'a str,
    #[schema(value_type = u64)]
    pub input_tokens: i64,
    #[schema(value_type = u64)]
    pub output_tokens: i64,
    #[schema(value_type = u64)]
    pub cache_read_tokens: i64,
    #[schema(value_type = u64)]
    pub cache_write_tokens: i64,
    /// Cost of this event in USD.
    #[serde(rename = "costUSD")]
    pub cost_usd: f64,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: DateTime<Utc>,
}

impl<'a> From<&'a event::Model> for StoredEvent<'a> {
    fn from(e: &'a event::Model) -> Self {
        Self {
            id: &e.id,
            user_id: &e.user_id,
            session_id: &e.session_id,
            timestamp: &e.timestamp,
            model: &e.model,
            input_tokens: e.input_tokens,
            output_tokens: e.output_tokens,
            cache_read_tokens: e.cache_read_tokens,
            cache_write_tokens: e.cache_write_tokens,
            cost_usd: e.cost_usd,
            created_at: e.created_at,
        }
    }
}

/// `GET /history` takes at most this many events at once.
pub const MAX_LIMIT: u64 = 500;

/// `GET /history` starts at most this far in (a bound on what reaches SQL).
pub const MAX_OFFSET: u64 = 1_000_000_000;

/// Pages further in than this are read through the pool: skipping that
/// many index entries is no longer a short read.
const SHORT_OFFSET: u64 = 10_000;

/// GET /history's body, `{ events, limit, offset }`, for a page of the
/// user's events, newest first (`limit` at most [`MAX_LIMIT`]). On SQLite
/// a short page is written straight from the rows as SQLite hands them
/// over ([`page_inline`]); otherwise, or if that read cannot be done, from
/// the models the pool reads ([`page_pooled`]). The two write the same
/// bytes (tested).
pub async fn history_body(
    db: &Db,
    user_id: &str,
    limit: u64,
    offset: u64,
) -> Result<Vec<u8>, HistoryError> {
    if offset <= SHORT_OFFSET
        && let Ok(body) = page_inline(db, user_id, limit, offset)
    {
        return Ok(body);
    }
    page_pooled(db, user_id, limit, offset).await
}

fn page(user_id: &str, limit: u64, offset: u64) -> Select<event::Entity> {
    event::Entity::find()
        .filter(event::Column::UserId.eq(user_id))
        .order_by_desc(event::Column::Seq)
        .limit(limit)
        .offset(offset)
}

/// The body, from the models the pool reads.
pub async fn page_pooled(
    db: &Db,
    user_id: &str,
    limit: u64,
    offset: u64,
) -> Result<Vec<u8>, HistoryError> {
    let limit = limit.min(MAX_LIMIT);
    let select = page(user_id, limit, offset);
    // A near page is a short read (on PostgreSQL, outside the pool).
    let rows = if offset <= SHORT_OFFSET {
        db.all_short(select).await?
    } else {
        select.all(db.read()).await?
    };
    let mut body = Envelope::open(rows.len());
    for row in &rows {
        body.event(&StoredEvent::from(row))?;
    }
    Ok(body.close(limit, offset))
}

/// The body, written from SQLite's rows while they are read; a miss when
/// this database is not read inline or a row is not as expected.
pub fn page_inline(db: &Db, user_id: &str, limit: u64, offset: u64) -> Result<Vec<u8>, Miss> {
    use event::Column as C;
    let limit = limit.min(MAX_LIMIT);
    let mut body = Envelope::open(usize::try_from(limit).unwrap_or(0));
    db.try_inline_rows(&page(user_id, limit, offset), |row| {
        let e = StoredEvent {
            id: row.str(C::Id as usize)?,
            user_id: row.str(C::UserId as usize)?,
            session_id: row.str(C::SessionId as usize)?,
            timestamp: row.str(C::Timestamp as usize)?,
            model: row.str(C::Model as usize)?,
            input_tokens: row.i64(C::InputTokens as usize)?,
            output_tokens: row.i64(C::OutputTokens as usize)?,
            cache_read_tokens: row.i64(C::CacheReadTokens as usize)?,
            cache_write_tokens: row.i64(C::CacheWriteTokens as usize)?,
            cost_usd: row.f64(C::CostUsd as usize)?,
            created_at: row.datetime(C::CreatedAt as usize)?,
        };
        body.event(&e).map_err(Miss::write)
    })?;
    Ok(body.close(limit, offset))
}

/// `{"events":[...],"limit":L,"offset":O}`, as serde writes the route's
/// `History`, one event at a time.
struct Envelope {
    buf: Vec<u8>,
    first: bool,
}

impl Envelope {
    /// About 330 bytes an event.
    fn open(events: usize) -> Self {
        let mut buf = Vec::with_capacity(64 + events.saturating_mul(340));
        buf.extend_from_slice(b"{\"events\":[");
        Self { buf, first: true }
    }

    fn event(&mut self, e: &StoredEvent<'_>) -> Result<(), keel_platform::http::json::JsonError> {
        if !std::mem::take(&mut self.first) {
            self.buf.push(b',');
        }
        keel_platform::http::json::to_writer(&mut self.buf, e)
    }

    fn close(mut self, limit: u64, offset: u64) -> Vec<u8> {
        use std::io::Write;
        // Writing into a Vec cannot fail.
        let _ = write!(self.buf, "],\"limit\":{limit},\"offset\":{offset}}}");
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_platform::sea_orm::Iterable;

    #[test]
    fn the_envelope_is_what_serde_writes_for_the_routes_history() {
        use crate::routes::history::History;
        let model = event::Model {
            seq: 7,
            id: "e1".to_owned(),
            user_id: "u \"1\"".to_owned(),
            session_id: "s\n".to_owned(),
            timestamp: "2026-01-01T00:00:00Z".to_owned(),
            model: "m".to_owned(),
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_write_tokens: 4,
            cost_usd: 0.1 + 0.2,
            created_at: DateTime::from_timestamp(1_767_225_600, 123_456_789).unwrap_or_default(),
        };
        for events in [vec![], vec![&model], vec![&model, &model]] {
            let mut body = Envelope::open(events.len());
            for e in &events {
                body.event(&StoredEvent::from(*e)).unwrap_or_default();
            }
            let expected = serde_json::to_string(&History {
                events: events.iter().map(|e| StoredEvent::from(*e)).collect(),
                limit: 50,
                offset: 3,
            })
            .unwrap_or_default();
            assert_eq!(String::from_utf8_lossy(&body.close(50, 3)), expected);
        }
    }

    #[test]
    fn event_columns_are_numbered_in_the_order_they_are_read() {
        for (i, c) in event::Column::iter().enumerate() {
            assert_eq!(c as usize, i, "{c:?}");
        }
    }
}
