//! A usage event, defined once: the seed's `UsageEventPayload` as it comes
//! in (POST /event), as it is stored, and as it goes out in GET /history.

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set};
use keel_platform::time::millis;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::values::{Amount, Count, IsoTimestamp, Text};
use crate::entity::event;

/// The seed's UsageEventPayload (body of POST /event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageEvent {
    /// Identifier of the usage session.
    #[schema(value_type = String)]
    pub session_id: Text<255>,
    /// ISO 8601.
    #[schema(value_type = String, format = DateTime)]
    pub timestamp: IsoTimestamp,
    #[schema(value_type = String)]
    pub model: Text<255>,
    #[schema(value_type = u64)]
    pub input_tokens: Count,
    #[schema(value_type = u64)]
    pub output_tokens: Count,
    #[schema(value_type = u64)]
    pub cache_read_tokens: Count,
    #[schema(value_type = u64)]
    pub cache_write_tokens: Count,
    /// Cost of this event in USD.
    #[serde(rename = "costUSD")]
    #[schema(value_type = f64)]
    pub cost_usd: Amount,
}

/// Every field of the payload is required, in the seed's order.
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

/// A stored event (elements of `events` in GET /history): the payload's
/// fields plus `id`, `userId` and `createdAt`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredEvent {
    pub id: String,
    pub user_id: String,
    #[serde(flatten)]
    pub event: UsageEvent,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: DateTime<Utc>,
}

impl From<event::Model> for StoredEvent {
    fn from(e: event::Model) -> Self {
        Self {
            id: e.id,
            user_id: e.user_id,
            event: UsageEvent {
                session_id: Text::stored(e.session_id),
                timestamp: IsoTimestamp::stored(e.timestamp),
                model: Text::stored(e.model),
                input_tokens: Count::stored(e.input_tokens),
                output_tokens: Count::stored(e.output_tokens),
                cache_read_tokens: Count::stored(e.cache_read_tokens),
                cache_write_tokens: Count::stored(e.cache_write_tokens),
                cost_usd: Amount::stored(e.cost_usd),
            },
            created_at: e.created_at,
        }
    }
}

/// `GET /history` takes at most this many events at once.
pub const MAX_LIMIT: u64 = 500;

/// A page of the user's events, newest first.
pub async fn history(
    db: &Db,
    user_id: &str,
    limit: u64,
    offset: u64,
) -> Result<Vec<StoredEvent>, keel_platform::sea_orm::DbErr> {
    let limit = limit.min(MAX_LIMIT);
    let at_once = if db.is_postgres() {
        None
    } else {
        super::history_sqlite::page(db, user_id, limit, offset).await?
    };
    if let Some(rows) = at_once {
        return Ok(rows.into_iter().map(StoredEvent::from).collect());
    }
    let rows = event::Entity::find()
        .filter(event::Column::UserId.eq(user_id))
        .order_by_desc(event::Column::Seq)
        .limit(limit)
        .offset(offset)
        .all(db.read())
        .await?;
    Ok(rows.into_iter().map(StoredEvent::from).collect())
}
