//! A page of `GET /history` read from SQLite as one row: sqlx hands each
//! row from SQLite's worker thread to the runtime separately (a channel
//! send and a wake-up per row), which made a 50-event page cost 50
//! hand-offs. SQLite builds the page as one JSON array instead; each event
//! is decoded into the same model and serialized by the same code as
//! before. Costs keep every digit (`%!.17g` round-trips a double), and
//! `createdAt` is decoded as sqlx decodes it. Anything unexpected returns
//! `None` and the caller reads the page row by row.

use chrono::{DateTime, NaiveDateTime, Utc};
use keel_platform::db::Db;
use keel_platform::sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement, Value};
use serde_json::Value as Json;

use crate::entity::event;

/// `exotic` counts costs outside the range where SQLite prints 17 exact
/// digits (its float printing drifts at extreme exponents): such a page is
/// read row by row.
const PAGE: &str = "SELECT json_group_array(json_array(id, user_id, session_id, timestamp, model, \
     input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
     printf('%!.17g', cost_usd), created_at, seq) ORDER BY seq DESC) AS page, \
     sum(cost_usd <> 0 AND (abs(cost_usd) < 1e-15 OR abs(cost_usd) > 1e15)) AS exotic \
     FROM (SELECT * FROM ua_events WHERE user_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?)";

/// The page, newest first; `None` when a row is not as expected.
pub async fn page(
    db: &Db,
    user_id: &str,
    limit: u64,
    offset: u64,
) -> Result<Option<Vec<event::Model>>, DbErr> {
    let (limit, offset) = (
        i64::try_from(limit).unwrap_or(i64::MAX),
        i64::try_from(offset).unwrap_or(i64::MAX),
    );
    let row = db
        .read()
        .query_one_raw(Statement::from_sql_and_values(
            DbBackend::Sqlite,
            PAGE,
            [
                Value::from(user_id),
                Value::from(limit),
                Value::from(offset),
            ],
        ))
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    if row
        .try_get::<Option<i64>>("", "exotic")
        .ok()
        .flatten()
        .unwrap_or(0)
        > 0
    {
        return Ok(None);
    }
    let Ok(text) = row.try_get::<String>("", "page") else {
        return Ok(None);
    };
    let Ok(Json::Array(items)) = serde_json::from_str::<Json>(&text) else {
        return Ok(None);
    };
    Ok(items.iter().map(model).collect())
}

fn model(item: &Json) -> Option<event::Model> {
    let a = item.as_array()?;
    let text = |i: usize| a.get(i)?.as_str().map(str::to_owned);
    let int = |i: usize| a.get(i)?.as_i64();
    Some(event::Model {
        id: text(0)?,
        user_id: text(1)?,
        session_id: text(2)?,
        timestamp: text(3)?,
        model: text(4)?,
        input_tokens: int(5)?,
        output_tokens: int(6)?,
        cache_read_tokens: int(7)?,
        cache_write_tokens: int(8)?,
        cost_usd: a.get(9)?.as_str()?.parse().ok()?,
        created_at: datetime(a.get(10)?.as_str()?)?,
        seq: int(11)?,
    })
}

/// As sqlx-sqlite decodes a text `DateTime<Utc>`.
fn datetime(value: &str) -> Option<DateTime<Utc>> {
    if let Ok(dt) = DateTime::parse_from_rfc3339(value) {
        return Some(dt.with_timezone(&Utc));
    }
    const FORMATS: [&str; 12] = [
        "%F %T%.f",
        "%F %R",
        "%F %RZ",
        "%F %R%:z",
        "%F %T%.fZ",
        "%F %T%.f%:z",
        "%FT%R",
        "%FT%RZ",
        "%FT%R%:z",
        "%FT%T%.f",
        "%FT%T%.fZ",
        "%FT%T%.f%:z",
    ];
    for f in FORMATS {
        if let Ok(dt) = DateTime::parse_from_str(value, f) {
            return Some(dt.with_timezone(&Utc));
        }
        if let Ok(dt) = NaiveDateTime::parse_from_str(value, f) {
            return Some(dt.and_utc());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_timestamps_decode_as_sqlx_decodes_them() {
        for v in [
            "2026-01-01T00:00:00+00:00",
            "2026-01-01 00:00:00.000000+00:00",
            "2026-01-01 00:00:00",
            "2026-01-01T00:00:00Z",
        ] {
            assert_eq!(
                datetime(v).map(|d| d.timestamp()),
                Some(1_767_225_600),
                "{v}"
            );
        }
        assert!(datetime("yesterday").is_none());
    }
}
