//! What a send asks for: its message, its target filters and its schedule
//! (`send_at`, or a wall-clock `local_time` in each device's own zone),
//! read field by field into typed values (`domain::values`), which the
//! OpenAPI document reads too.

use chrono::{DateTime, Duration, NaiveTime, TimeZone, Utc};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::domain::values::{AsSent, Data, Moment, Required, WallClock};
use crate::domain::values::{PUSH_TOKEN_PATTERN, valid_push_token};

/// Which active devices a send goes to; every filter given must match.
/// Stored with the send as its JSON, read back by the same `Deserialize`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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

/// The filters as a body gives them; documents `target`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Filters {
    /// `ios` or `android`.
    #[serde(default, deserialize_with = "device_type")]
    #[schema(value_type = Option<String>, pattern = "^(ios|android)$")]
    device_type: Option<String>,
    #[serde(default)]
    #[schema(inline)]
    locale: AsSent<35>,
    #[serde(default)]
    #[schema(inline)]
    app_version: AsSent<50>,
    /// At most 10,000 push tokens.
    #[serde(default, deserialize_with = "push_tokens")]
    #[schema(schema_with = push_tokens_schema)]
    push_tokens: Option<Vec<String>>,
}

fn device_type<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Option::<String>::deserialize(d).map_err(|_| D::Error::custom("must be a string"))? {
        None => Ok(None),
        Some(t) if t == "ios" || t == "android" => Ok(Some(t)),
        Some(_) => Err(D::Error::custom("must be ios or android")),
    }
}

fn push_tokens<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::Array(items) if items.len() <= 10_000 => items
            .iter()
            .map(|v| {
                v.as_str()
                    .filter(|t| valid_push_token(t))
                    .map(str::to_owned)
            })
            .collect::<Option<Vec<String>>>()
            .map(Some)
            .ok_or_else(|| D::Error::custom("must be push tokens")),
        _ => Err(D::Error::custom("must be an array of at most 10000 tokens")),
    }
}

fn push_tokens_schema() -> utoipa::openapi::schema::Array {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    let token = ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(PUSH_TOKEN_PATTERN));
    ArrayBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            Type::Array,
            Type::Null,
        ]))
        .items(token)
        .max_items(Some(10_000))
        .build()
}

/// `target`: absent, `null` or `"all"` (every active device), or filters.
/// A wrong filter is an error of `target` naming the filter, as it was.
impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let o = match Value::deserialize(d)? {
            Value::Null => return Ok(Self::default()),
            Value::String(s) if s == "all" => return Ok(Self::default()),
            Value::Object(o) => o,
            _ => {
                return Err(D::Error::custom(
                    "must be an object of filters (or \"all\")",
                ));
            }
        };
        let known = ["device_type", "locale", "app_version", "push_tokens"];
        if let Some(k) = o.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(D::Error::custom(format!("has an unknown filter {k:?}")));
        }
        let f: Filters = keel_platform::values::read(Value::Object(o))
            .map_err(|f| D::Error::custom(format!("{} {}", f.path, f.problem)))?;
        Ok(Self {
            device_type: f.device_type,
            locale: f.locale.0,
            app_version: f.app_version.0,
            push_tokens: f.push_tokens,
        })
    }
}

/// POST /send's body, as read (JSON, or a form with bracketed keys, or
/// multipart with `data` and `target` as JSON parts); each field checked
/// by its type.
#[derive(Debug, Deserialize, ToSchema)]
pub struct SendBody {
    // 1 to 200 characters, not blank.
    #[schema(inline)]
    pub title: Required<200>,
    // 1 to 2,000 characters, not blank.
    #[schema(inline)]
    pub body: Required<2000>,
    #[serde(default)]
    #[schema(inline)]
    pub data: Option<Data>,
    /// Default (absent, `null` or the string `"all"`): every active device.
    #[serde(default)]
    #[schema(value_type = Option<Filters>)]
    pub target: Target,
    // ISO 8601 with an offset; in the future: scheduled.
    #[serde(default)]
    #[schema(inline)]
    pub send_at: Option<Moment>,
    // `HH:MM` in each device's own time zone.
    #[serde(default)]
    #[schema(inline)]
    pub local_time: Option<WallClock>,
}

/// A send, checked (see [`SendBody`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SendRequest {
    pub title: String,
    pub body: String,
    pub data: Option<Map<String, Value>>,
    pub target: Target,
    pub send_at: Option<DateTime<Utc>>,
    pub local_time: Option<NaiveTime>,
}

impl From<SendBody> for SendRequest {
    fn from(b: SendBody) -> Self {
        Self {
            title: b.title.into_string(),
            body: b.body.into_string(),
            data: b.data.map(|d| d.0),
            target: b.target,
            send_at: b.send_at.map(|m| m.0),
            local_time: b.local_time.map(|w| w.0),
        }
    }
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
    fn send_bodies_are_checked_field_by_field() {
        let read = |v: Value| serde_json::from_value::<SendBody>(v).map_err(|e| e.to_string());
        assert!(read(serde_json::json!({"title": "t", "body": "b"})).is_ok());
        assert!(read(serde_json::json!({"title": "t", "body": "b", "target": "all"})).is_ok());
        for bad in [
            serde_json::json!({"body": "b"}),
            serde_json::json!({"title": "t", "body": "b", "data": [1]}),
            serde_json::json!({"title": "t", "body": "b", "send_at": "tomorrow"}),
            serde_json::json!({"title": "t", "body": "b", "local_time": "9:00"}),
            serde_json::json!({"title": "t", "body": "b", "target": {"device_type": "windows"}}),
            serde_json::json!({"title": "t", "body": "b", "target": {"nope": 1}}),
        ] {
            assert!(read(bad.clone()).is_err(), "{bad}");
        }
        let e = read(
            serde_json::json!({"title": "t", "body": "b", "target": {"device_type": "windows"}}),
        );
        assert_eq!(
            e.err().as_deref(),
            Some("device_type must be ios or android")
        );
    }
}
