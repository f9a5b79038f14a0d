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
    /// The sink could not take an event.
    #[error("writing an event: {0}")]
    Write(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Where a page of events goes, one event at a time (GET /history writes
/// each into its body as it is read).
pub trait EventSink {
    type Error: std::error::Error + Send + Sync + 'static;
    /// Drops what it took so far: the read is being done again another way.
    fn restart(&mut self);
    fn event(&mut self, e: &StoredEvent<'_>) -> Result<(), Self::Error>;
}

/// The UsageEventPayload (body of POST /event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageEvent {
    /// Identifier of the usage session.
    #[schema(inline)]
    pub session_id: Text<255>,
    /// ISO 8601.
    #[schema(value_type = String, format = DateTime)]
    pub timestamp: IsoTimestamp,
    #[schema(inline)]
    pub model: Text<255>,
    #[schema(inline)]
    pub input_tokens: Count,
    #[schema(inline)]
    pub output_tokens: Count,
    #[schema(inline)]
    pub cache_read_tokens: Count,
    #[schema(inline)]
    pub cache_write_tokens: Count,
    /// Cost of this event in USD.
    #[serde(rename = "costUSD")]
    #[schema(value_type = f64, minimum = 0, maximum = 1_000_000)]
    pub cost_usd: Amount,
}

keel_platform::required_fields!(UsageEvent);

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

/// Which of a user's events to read: `limit` of them after skipping
/// `offset`, newest first.
#[derive(Debug, Clone, Copy)]
pub struct HistoryPage<'a> {
    pub user_id: &'a str,
    pub limit: u64,
    pub offset: u64,
}

/// Hands `sink` a page of the user's events, newest first (`limit` at
/// most [`MAX_LIMIT`]). On SQLite a short page is handed over straight
/// from the rows as SQLite reads them ([`page_inline`]); otherwise, or if
/// that read cannot be done, from the models the pool reads
/// ([`page_pooled`]). Both hand over the same events (tested).
pub async fn history_into<S: EventSink>(
    db: &Db,
    page: HistoryPage<'_>,
    sink: &mut S,
) -> Result<(), HistoryError> {
    if page.offset <= SHORT_OFFSET && page_inline(db, page, sink).is_ok() {
        return Ok(());
    }
    sink.restart();
    page_pooled(db, page, sink).await
}

fn select_page(
    HistoryPage {
        user_id,
        limit,
        offset,
    }: HistoryPage<'_>,
) -> Select<event::Entity> {
    let limit = limit.min(MAX_LIMIT);
    event::Entity::find()
        .filter(event::Column::UserId.eq(user_id))
        .order_by_desc(event::Column::Seq)
        .limit(limit)
        .offset(offset)
}

/// The page, from the models the pool reads.
pub async fn page_pooled<S: EventSink>(
    db: &Db,
    page: HistoryPage<'_>,
    sink: &mut S,
) -> Result<(), HistoryError> {
    let select = select_page(page);
    // A near page is a short read (on PostgreSQL, outside the pool).
    let rows = if page.offset <= SHORT_OFFSET {
        db.all_short(select).await?
    } else {
        select.all(db.read()).await?
    };
    for row in &rows {
        sink.event(&StoredEvent::from(row))
            .map_err(|e| HistoryError::Write(Box::new(e)))?;
    }
    Ok(())
}

/// The page, from SQLite's rows while they are read; a miss when this
/// database is not read inline or a row is not as expected.
pub fn page_inline<S: EventSink>(db: &Db, page: HistoryPage<'_>, sink: &mut S) -> Result<(), Miss> {
    use event::Column as C;
    db.try_inline_rows(&select_page(page), |row| {
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
        sink.event(&e).map_err(Miss::write)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_platform::sea_orm::Iterable;

    #[test]
    fn event_columns_are_numbered_in_the_order_they_are_read() {
        for (i, c) in event::Column::iter().enumerate() {
            assert_eq!(c as usize, i, "{c:?}");
        }
    }
}
