//! GET /history.

use axum::extract::State;
use keel_platform::http::JsonBytes;
use keel_platform::http::openapi::{whole_number, whole_number_to};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::domain::event::{self, EventSink, MAX_LIMIT, MAX_OFFSET, StoredEvent};
use crate::error::{self, Error, ErrorBody};
use crate::input::Params;
use crate::state::AppState;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Page {
    /// Default 50; a value above 500 is served as 500.
    #[param(schema_with = whole_number)]
    limit: Option<String>,
    /// Default 0, at most 1,000,000,000.
    #[param(schema_with = offset_schema)]
    offset: Option<String>,
}

fn offset_schema() -> utoipa::openapi::schema::Object {
    whole_number_to(MAX_OFFSET)
}

/// `raw` as a whole number, `default` when absent; `None` for a number too
/// large for `u64` (which every bound below it refuses or caps).
fn whole(raw: Option<&str>, field: &str, default: u64) -> Result<Option<u64>, Error> {
    let Some(v) = raw else {
        return Ok(Some(default));
    };
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(error::invalid(field, "must be a non-negative integer"));
    }
    Ok(v.parse::<u64>().ok())
}

/// The body (written by [`Envelope`] as the events are read, exactly what
/// serde writes for this; tested).
#[derive(Serialize, ToSchema)]
pub struct History<'a> {
    pub events: Vec<StoredEvent<'a>>,
    pub limit: u64,
    pub offset: u64,
}

/// `{"events":[...],"limit":L,"offset":O}`, as serde writes `History`,
/// one event at a time.
pub struct Envelope {
    buf: Vec<u8>,
    first: bool,
}

impl Envelope {
    /// About 330 bytes an event.
    pub fn open(events: usize) -> Self {
        let mut buf = Vec::with_capacity(64 + events.saturating_mul(340));
        buf.extend_from_slice(b"{\"events\":[");
        Self { buf, first: true }
    }

    pub fn close(mut self, limit: u64, offset: u64) -> Vec<u8> {
        use std::io::Write;
        // Writing into a Vec cannot fail.
        let _ = write!(self.buf, "],\"limit\":{limit},\"offset\":{offset}}}");
        self.buf
    }
}

impl EventSink for Envelope {
    type Error = keel_platform::http::json::JsonError;

    fn restart(&mut self) {
        self.buf.truncate("{\"events\":[".len());
        self.first = true;
    }

    fn event(&mut self, e: &StoredEvent<'_>) -> Result<(), Self::Error> {
        if !std::mem::take(&mut self.first) {
            self.buf.push(b',');
        }
        keel_platform::http::json::to_writer(&mut self.buf, e)
    }
}

/// The caller's events, newest first.
#[utoipa::path(get, path = "/history", tag = "usage-alerts", security(("identity" = [])),
    params(Page),
    responses(
        (status = 200, body = History<'static>),
        (status = 400, description = "limit or offset is not a non-negative integer, or offset is above 1,000,000,000", body = ErrorBody),
    ))]
pub async fn history(
    State(state): State<AppState>,
    me: Caller,
    Params(page): Params<Page>,
) -> Result<JsonBytes, Error> {
    let limit = whole(page.limit.as_deref(), "limit", 50)?.map_or(MAX_LIMIT, |l| l.min(MAX_LIMIT));
    let offset = whole(page.offset.as_deref(), "offset", 0)?
        .filter(|o| *o <= MAX_OFFSET)
        .ok_or_else(|| error::invalid("offset", "must be at most 1000000000"))?;
    let mut body = Envelope::open(usize::try_from(limit).unwrap_or(0));
    let page = event::HistoryPage {
        user_id: &me.user_id,
        limit,
        offset,
    };
    event::history_into(&state.db, page, &mut body).await?;
    Ok(JsonBytes(body.close(limit, offset)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::event as stored;

    #[test]
    fn the_envelope_is_what_serde_writes_for_history() {
        let model = stored::Model {
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
            created_at: chrono::DateTime::from_timestamp(1_767_225_600, 123_456_789)
                .unwrap_or_default(),
        };
        for events in [vec![], vec![&model], vec![&model, &model]] {
            let mut body = Envelope::open(events.len());
            // A restart drops what was written before it.
            body.event(&StoredEvent::from(&model)).unwrap_or_default();
            body.restart();
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
}
