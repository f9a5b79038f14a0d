//! Request bodies: form-urlencoded (the documented format) or JSON. A field of
//! the wrong type is a 400 naming the field; any other content type is 415.

use keel_platform::http::input::Formats;
use serde::{Deserialize, Deserializer};

use crate::error::Error;

keel_platform::body_extractor!(
    /// A body read as form or JSON by its `Content-Type`.
    pub Input,
    Error,
    Formats::JSON_OR_FORM
);

keel_platform::body_extractor!(
    /// A JSON body (a WebAuthn response is nested JSON: no form for it).
    pub JsonInput,
    Error,
    Formats::JSON
);

keel_platform::query_extractor!(
    /// The query string read into its type (a failure in the service's shape).
    pub Params,
    Error
);

/// Accepts a string, or a number written as one (codes typed as numbers).
pub fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        S(String),
        N(u64),
    }
    Ok(Option::<Raw>::deserialize(d)?.map(|r| match r {
        Raw::S(s) => s,
        Raw::N(n) => n.to_string(),
    }))
}

/// An optional string that, when present, is a string (`null` is refused
/// like any other wrong type, as the document declares no `null`).
pub fn present_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}

/// A boolean, or `true` / `false` written as a string (form bodies).
pub fn lenient_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        B(bool),
        S(String),
    }
    match Option::<Raw>::deserialize(d)? {
        None => Ok(None),
        Some(Raw::B(b)) => Ok(Some(b)),
        Some(Raw::S(s)) => match s.as_str() {
            "true" => Ok(Some(true)),
            "false" => Ok(Some(false)),
            _ => Err(serde::de::Error::custom("expected true or false")),
        },
    }
}
