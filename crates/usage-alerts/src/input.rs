//! JSON bodies and their fields, checked one by one so every 400 names the
//! field: `Missing required field: <field>` when absent, `Invalid field:
//! <field> ...` when of the wrong type or value.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use keel_platform::http::PlatformError;
use serde_json::{Map, Value};

use crate::error::Error;

/// A JSON object body (`Content-Type: application/json`).
pub struct JsonObject(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Error> {
        let json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase())
            .is_some_and(|t| t == "application/json" || t.ends_with("+json"));
        if !json {
            return Err(Error::bad_request("Content-Type must be application/json"));
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|r| Error::from(PlatformError::from_rejection(r.status(), r.body_text())))?;
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(Self(map)),
            Ok(_) => Err(Error::bad_request("Request body must be a JSON object")),
            Err(e) => Err(Error::bad_request(format!(
                "Request body is not valid JSON: {e}"
            ))),
        }
    }
}

pub fn missing(field: &str) -> Error {
    Error::bad_request(format!("Missing required field: {field}"))
}

pub fn invalid(field: &str, problem: &str) -> Error {
    Error::bad_request(format!("Invalid field: {field} {problem}"))
}

fn present<'a>(obj: &'a Map<String, Value>, field: &str) -> Result<&'a Value, Error> {
    match obj.get(field) {
        None | Some(Value::Null) => Err(missing(field)),
        Some(v) => Ok(v),
    }
}

/// A non-empty string of at most `max` characters.
pub fn string(obj: &Map<String, Value>, field: &str, max: usize) -> Result<String, Error> {
    let Value::String(s) = present(obj, field)? else {
        return Err(invalid(field, "must be a string"));
    };
    if s.trim().is_empty() {
        return Err(invalid(field, "must not be empty"));
    }
    if s.chars().count() > max {
        return Err(invalid(field, &format!("must be at most {max} characters")));
    }
    Ok(s.clone())
}

/// A whole number ≥ 0.
pub fn count(obj: &Map<String, Value>, field: &str) -> Result<i64, Error> {
    let v = present(obj, field)?;
    v.as_i64()
        .or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                .map(|f| f as i64)
        })
        .filter(|n| *n >= 0)
        .ok_or_else(|| invalid(field, "must be a non-negative integer"))
}

/// A finite number ≥ 0.
pub fn amount(obj: &Map<String, Value>, field: &str) -> Result<f64, Error> {
    present(obj, field)?
        .as_f64()
        .filter(|f| f.is_finite() && *f >= 0.0)
        .ok_or_else(|| invalid(field, "must be a non-negative number"))
}

pub fn optional_bool(obj: &Map<String, Value>, field: &str) -> Result<Option<bool>, Error> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(invalid(field, "must be true or false")),
    }
}

/// An ISO 8601 date-time (with or without offset, with or without fraction).
pub fn timestamp(obj: &Map<String, Value>, field: &str) -> Result<String, Error> {
    let raw = string(obj, field, 64)?;
    let ok = chrono::DateTime::parse_from_rfc3339(&raw).is_ok()
        || chrono::NaiveDateTime::parse_from_str(&raw, "%Y-%m-%dT%H:%M:%S%.f").is_ok();
    if ok {
        Ok(raw)
    } else {
        Err(invalid(
            field,
            "must be an ISO 8601 timestamp (e.g. 2026-01-02T03:04:05Z)",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn fields_are_named_in_errors() {
        let o = obj(json!({"a": -1, "b": 1.5, "c": "x", "t": "yesterday", "n": null}));
        let msg = |e: Error| e.to_string();
        assert_eq!(
            msg(count(&o, "zz").unwrap_err()),
            "Missing required field: zz"
        );
        assert_eq!(
            msg(count(&o, "n").unwrap_err()),
            "Missing required field: n"
        );
        assert!(msg(count(&o, "a").unwrap_err()).contains("a must be a non-negative integer"));
        assert!(count(&o, "b").is_err());
        assert!(amount(&o, "a").is_err());
        assert!(msg(timestamp(&o, "t").unwrap_err()).contains("ISO 8601"));
        assert!(string(&o, "a", 10).is_err());
    }

    #[test]
    fn iso_timestamps_are_accepted_in_their_usual_forms() {
        for t in [
            "2026-01-02T03:04:05Z",
            "2026-01-02T03:04:05.678+01:00",
            "2026-01-02T03:04:05",
        ] {
            assert!(timestamp(&obj(json!({"t": t})), "t").is_ok(), "{t}");
        }
    }
}
