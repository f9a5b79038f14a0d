//! The values the channel's procedures take, each checked once as it is
//! read: a wrong one is a BAD_REQUEST naming the field and the rule.
//! Bounded text is platform's `values::Text`.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Why a value was refused; shown after the field's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("must be an email address")]
    NotEmail,
    #[error("must be 10 to 200 characters")]
    PasswordLength,
    #[error("is too easy to guess: {0}")]
    Guessable(String),
    #[error("must be an http(s) URL")]
    NotWebUrl,
}

fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        _ => Err(D::Error::custom("must be a string")),
    }
}

/// An email address (compared without case).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Email(String);

impl Email {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let t = raw.trim();
        if t.len() <= 254 && email_address::EmailAddress::is_valid(t) {
            Ok(Self(t.to_lowercase()))
        } else {
            Err(Invalid::NotEmail)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Email {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::parse(&string(d)?).map_err(D::Error::custom)
    }
}

/// A new password: 10 to 200 characters, not too easy to guess.
#[derive(Clone, PartialEq, Eq)]
pub struct NewPassword(String);

impl NewPassword {
    pub fn parse(raw: String) -> Result<Self, Invalid> {
        let n = raw.chars().count();
        if !(10..=200).contains(&n) {
            return Err(Invalid::PasswordLength);
        }
        match keel_platform::password::too_guessable(&raw, &[]) {
            Some(why) => Err(Invalid::Guessable(why)),
            None => Ok(Self(raw)),
        }
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

impl std::fmt::Debug for NewPassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NewPassword(..)")
    }
}

impl<'de> Deserialize<'de> for NewPassword {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::parse(string(d)?).map_err(D::Error::custom)
    }
}

/// An http(s) URL of at most 500 characters, exactly as sent
/// ([`keel_platform::http::patterns::HTTP_URL`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct WebUrl(String);

impl WebUrl {
    pub const MAX: usize = 500;

    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let ok = raw.chars().count() <= Self::MAX
            && keel_platform::http::patterns::is_http_url(raw)
            && url::Url::parse(raw).is_ok();
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(Invalid::NotWebUrl)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de> Deserialize<'de> for WebUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::parse(&string(d)?).map_err(D::Error::custom)
    }
}

/// `null` or `""` clears an optional URL; otherwise it must be one.
pub fn clearable_url<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<WebUrl>>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(Some(None)),
        Value::String(s) if s.is_empty() => Ok(Some(None)),
        Value::String(s) => WebUrl::parse(&s)
            .map(|u| Some(Some(u)))
            .map_err(D::Error::custom),
        _ => Err(D::Error::custom("must be an http(s) URL or null")),
    }
}

/// How a document describes a [`WebUrl`] field: `nullable` when `null` is
/// taken (as absent), `clearable` when `""` is too.
fn url_schema(nullable: bool, clearable: bool) -> utoipa::openapi::schema::Object {
    use keel_platform::http::patterns::HTTP_URL;
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    let types = if nullable {
        SchemaType::from_iter([Type::String, Type::Null])
    } else {
        SchemaType::new(Type::String)
    };
    let pattern = if clearable {
        format!("^$|{HTTP_URL}")
    } else {
        HTTP_URL.to_owned()
    };
    ObjectBuilder::new()
        .schema_type(types)
        .max_length(Some(WebUrl::MAX))
        .pattern(Some(pattern))
        .build()
}

/// A required URL.
pub fn web_url_schema() -> utoipa::openapi::schema::Object {
    url_schema(false, false)
}

/// An optional URL (`null` is absent).
pub fn optional_url_schema() -> utoipa::openapi::schema::Object {
    url_schema(true, false)
}

/// A URL that `null` or `""` clears.
pub fn clearable_url_schema() -> utoipa::openapi::schema::Object {
    url_schema(true, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_platform::values::{NotBlank, Text};
    use serde_json::json;

    fn read<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn values_are_checked_as_they_are_read() {
        assert_eq!(
            read::<Text<5, NotBlank>>(json!(" ab ")).map(Text::into_string),
            Ok("ab".into())
        );
        assert_eq!(
            read::<Text<5, NotBlank>>(json!("  ab  ")).unwrap_err(),
            "must be at most 5 characters",
            "the bound is on what is sent"
        );
        assert_eq!(
            read::<Text<5, NotBlank>>(json!("   ")).unwrap_err(),
            "must not be empty"
        );
        assert_eq!(
            read::<Text<5, NotBlank>>(json!("abcdef")).unwrap_err(),
            "must be at most 5 characters"
        );
        assert_eq!(
            read::<Text<5, NotBlank>>(json!(3)).unwrap_err(),
            "must be a string"
        );
        assert_eq!(
            read::<Email>(json!("Ada@Example.COM")).map(|e| e.as_str().to_owned()),
            Ok("ada@example.com".into())
        );
        assert!(read::<Email>(json!("nope")).is_err());
        assert!(read::<NewPassword>(json!("short")).is_err());
        assert!(read::<WebUrl>(json!("javascript:alert(1)")).is_err());
        assert!(read::<WebUrl>(json!("https://example.com/x")).is_ok());
    }
}
