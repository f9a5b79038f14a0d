//! The values the API constrains, each parsed once at the edge: a body
//! field of the wrong shape is refused naming the field and the rule
//! (`Invalid field: platform must be ios or watchos`). They deserialize
//! from the JSON values of a request body and serialize as what they hold.

use keel_platform::values;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// A body field that is absent or wrong, as the API words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    #[error("Missing required field: {0}")]
    Missing(String),
    #[error("Invalid field: {field} {problem}")]
    Invalid { field: String, problem: String },
}

impl FieldError {
    pub fn invalid(field: &str, problem: &str) -> Self {
        Self::Invalid {
            field: field.to_owned(),
            problem: problem.to_owned(),
        }
    }
}

/// Absent, `null`, or a string with nothing but spaces: what a client
/// checking the documented message calls missing. (`0` and `false` are values.)
pub fn is_missing(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => keel_platform::values::is_blank(s),
        Some(_) => false,
    }
}

/// Presence before format: the first of `fields` that is missing.
pub fn require<F: AsRef<str>>(
    obj: &serde_json::Map<String, Value>,
    fields: &[F],
) -> Result<(), FieldError> {
    match fields.iter().find(|f| is_missing(obj.get(f.as_ref()))) {
        Some(f) => Err(FieldError::Missing(f.as_ref().to_owned())),
        None => Ok(()),
    }
}

fn value<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    Value::deserialize(d)
}

/// A string of at most `MAX` characters, exactly as sent (presence, and so
/// blankness, is checked before: [`require`]).
pub type Text<const MAX: usize> = values::Text<MAX, values::Filled>;

/// A whole number from 0 to 1,000,000,000 (`12` or `12.0`): a token count
/// of one event. The bound keeps a day's sums far inside 64 bits.
pub type Count = values::Whole<0, 1_000_000_000>;

/// A number from 0 to [`Amount::MAX`] (a cost in USD of one event).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Amount(f64);

impl Amount {
    pub const MAX: f64 = 1_000_000.0;

    pub fn get(self) -> f64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        value(d)?
            .as_f64()
            .filter(|f| (0.0..=Self::MAX).contains(f))
            .map(Self)
            .ok_or_else(|| D::Error::custom("must be a number from 0 to 1000000"))
    }
}

/// An ISO 8601 date-time, kept as sent (with or without offset or fraction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct IsoTimestamp(String);

impl IsoTimestamp {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn parse(raw: &str) -> Option<Self> {
        let ok = raw.len() <= 64
            && (chrono::DateTime::parse_from_rfc3339(raw).is_ok()
                || chrono::NaiveDateTime::parse_from_str(raw, "%Y-%m-%dT%H:%M:%S%.f").is_ok());
        ok.then(|| Self(raw.to_owned()))
    }
}

impl<'de> Deserialize<'de> for IsoTimestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bad = || D::Error::custom("must be an ISO 8601 timestamp (e.g. 2026-01-02T03:04:05Z)");
        match value(d)? {
            Value::String(s) => Self::parse(&s).ok_or_else(bad),
            _ => Err(bad()),
        }
    }
}

/// An APNs device token: 64 to 200 hexadecimal characters, kept lower-case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct DeviceToken(String);

pub const MAX_TOKEN: usize = 200;

impl DeviceToken {
    pub fn parse(raw: &str) -> Option<Self> {
        let ok = (64..=MAX_TOKEN).contains(&raw.len())
            && raw.len().is_multiple_of(2)
            && raw.bytes().all(|b| b.is_ascii_hexdigit());
        ok.then(|| Self(raw.to_ascii_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de> Deserialize<'de> for DeviceToken {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match value(d)? {
            Value::String(s) => Self::parse(&s).ok_or_else(|| {
                D::Error::custom("must be an APNs device token (64 to 200 hexadecimal characters)")
            }),
            _ => Err(D::Error::custom("must be a string")),
        }
    }
}

pub use crate::entity::kinds::Platform;

/// `true` or `false`, nothing else.
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    match value(d)? {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(b)),
        _ => Err(D::Error::custom("must be true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn each_value_names_its_rule() {
        assert_eq!(read::<Count>(json!(3.0)).map(Count::get), Ok(3));
        assert_eq!(
            read::<Count>(json!(-1)).unwrap_err(),
            "must be an integer from 0 to 1000000000"
        );
        assert!(read::<Count>(json!(1_000_000_001)).is_err());
        assert!(read::<Amount>(json!(1e300)).is_err());
        assert!(read::<Count>(json!("12")).is_err());
        assert!(read::<Count>(json!(1.5)).is_err());
        assert!(read::<Amount>(json!("free")).is_err());
        assert_eq!(
            read::<Text<3>>(json!("abcd")).unwrap_err(),
            "must be at most 3 characters"
        );
        assert_eq!(
            read::<Text<3>>(json!(["a"])).unwrap_err(),
            "must be a string"
        );
        assert!(read::<IsoTimestamp>(json!("2026-01-02T03:04:05")).is_ok());
        assert!(read::<IsoTimestamp>(json!(1_700_000_000)).is_err());
        assert_eq!(
            read::<Platform>(json!("android")).unwrap_err(),
            "must be ios or watchos"
        );
        let t = "AB".repeat(32);
        assert_eq!(
            read::<DeviceToken>(json!(t)).map(DeviceToken::into_string),
            Ok("ab".repeat(32))
        );
        assert!(read::<DeviceToken>(json!("xyz")).is_err());
    }

    #[test]
    fn iso_timestamps_are_accepted_in_their_usual_forms() {
        for t in [
            "2026-01-02T03:04:05Z",
            "2026-01-02T03:04:05.678+01:00",
            "2026-01-02T03:04:05",
        ] {
            assert!(IsoTimestamp::parse(t).is_some(), "{t}");
        }
    }
}
