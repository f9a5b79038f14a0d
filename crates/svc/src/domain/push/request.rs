//! What a send asks for: its message, its target filters and its schedule
//! (`send_at`, or a wall-clock `local_time` in each device's own zone),
//! checked field by field.

use chrono::{DateTime, Duration, NaiveTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::registration::{ParamError, invalid, missing, valid_push_token};

/// Which active devices a send goes to; every filter given must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// `ios` or `android`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^(ios|android)$")]
    pub device_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 35)]
    pub locale: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 50)]
    pub app_version: Option<String>,
    /// At most 10,000 push tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = push_tokens_schema)]
    pub push_tokens: Option<Vec<String>>,
}

fn push_tokens_schema() -> utoipa::openapi::schema::Array {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    let token = ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(super::registration::PUSH_TOKEN_PATTERN));
    ArrayBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            Type::Array,
            Type::Null,
        ]))
        .items(token)
        .max_items(Some(10_000))
        .build()
}

/// A send, checked by [`SendRequest::parse`]; documents POST /send's body.
#[derive(Debug, Clone, PartialEq, ToSchema)]
pub struct SendRequest {
    /// 1 to 200 characters, not blank.
    #[schema(max_length = 200, pattern = r"\S")]
    pub title: String,
    /// 1 to 2,000 characters, not blank.
    #[schema(max_length = 2000, pattern = r"\S")]
    pub body: String,
    #[schema(value_type = Option<std::collections::HashMap<String, serde_json::Value>>)]
    pub data: Option<Map<String, Value>>,
    /// Default (absent, `null` or the string `"all"`): every active device.
    #[schema(value_type = Option<Target>, required = false)]
    pub target: Target,
    /// ISO 8601 with an offset; in the future: scheduled.
    #[schema(value_type = Option<String>, format = DateTime, max_length = 64)]
    pub send_at: Option<DateTime<Utc>>,
    /// `HH:MM` in each device's own time zone.
    #[schema(value_type = Option<String>, pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    pub local_time: Option<NaiveTime>,
}

fn string(
    body: &Map<String, Value>,
    field: &str,
    max: usize,
    required: bool,
) -> Result<Option<String>, ParamError> {
    match body.get(field) {
        None | Some(Value::Null) if required => Err(missing(field)),
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if required && keel_platform::http::input::is_blank(s) => {
            Err(missing(field))
        }
        Some(Value::String(s)) if s.chars().count() > max => {
            Err(invalid(field, &format!("must be at most {max} characters")))
        }
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(field, "must be a string")),
    }
}

impl SendRequest {
    pub fn parse(body: &Map<String, Value>) -> Result<Self, ParamError> {
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

fn parse_target(o: &Map<String, Value>) -> Result<Target, ParamError> {
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
