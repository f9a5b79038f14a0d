//! The values svc's request bodies hold, each checked as it is read (a
//! wrong one names its field and the rule) and documented by its own type,
//! so a limit is written once: in the type, which both the check and the
//! OpenAPI document read.

use chrono::{DateTime, NaiveTime, Utc};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};

use std::sync::OnceLock;

use keel_platform::values::{Refusal, Rule, Text, Trimmed, string_schema, text_schema};
use regex::Regex;

/// A push token shaped `<Name>PushToken[<opaque>]`, as the API documents it
/// (`ProviderPushToken[...]`) and as Expo issues it (`ExponentPushToken[...]`,
/// `ExpoPushToken[...]`): a name of 1–32 letters and digits starting with a
/// letter, and an opaque part of 1–200 printable characters without spaces
/// or brackets. It is stored and handed to Expo exactly as given.
pub fn valid_push_token(t: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(PUSH_TOKEN_PATTERN).ok())
        .as_ref()
        .is_some_and(|re| re.is_match(t))
}

/// The pattern of [`valid_push_token`] (also what the document says).
pub const PUSH_TOKEN_PATTERN: &str = r"^[A-Za-z][A-Za-z0-9]{0,31}PushToken\[[!-Z\\^-~]{1,200}\]$";

/// What a push token must look like, for error messages.
pub const PUSH_TOKEN_SHAPE: &str =
    "must look like <Name>PushToken[<opaque>], e.g. ExponentPushToken[...]";

/// A BCP 47 style tag: `en`, `en-US`, `pt_BR`, `zh-Hant-TW`.
pub fn valid_locale(l: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$").ok())
        .as_ref()
        .is_some_and(|re| l.len() <= 35 && re.is_match(l))
}

pub fn valid_timezone(tz: &str) -> bool {
    tz.parse::<chrono_tz::Tz>().is_ok()
}

/// What a required value says when it is absent, null or blank; the body
/// extractor answers it as `rest_missing_callback_param`.
pub const REQUIRED: &str = "is required";

fn must_be_string<E: serde::de::Error>() -> E {
    E::custom(Refusal::NotString.words(0))
}

fn too_long<E: serde::de::Error>(max: usize) -> E {
    E::custom(Refusal::TooLong.words(max))
}

/// Documents a value: its schema, inline in the body that holds it.
macro_rules! documented {
    ($ty:ty, $schema:expr) => {
        impl utoipa::PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                $schema.into()
            }
        }
        impl utoipa::ToSchema for $ty {}
    };
    (const $max:ident: $ty:ty, $schema:expr) => {
        impl<const $max: usize> utoipa::PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                $schema.into()
            }
        }
        impl<const $max: usize> utoipa::ToSchema for $ty {}
    };
}

/// The rule of text that must be there: not blank (`null` is blank too),
/// kept as sent; blank is answered [`REQUIRED`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
pub struct Needed;

impl Rule for Needed {
    const NOT_BLANK: bool = true;
    const NULL_IS_BLANK: bool = true;

    fn words(refusal: Refusal, max: usize) -> String {
        match refusal {
            Refusal::Blank => REQUIRED.to_owned(),
            r => r.words(max),
        }
    }
}

/// Text that must be there: not blank, at most `MAX` characters, kept as
/// sent.
pub type Required<const MAX: usize> = Text<MAX, Needed>;

/// Free text that may be left out: trimmed, blank or null as absent, at
/// most `MAX` characters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FreeText<const MAX: usize>(pub Option<String>);

impl<'de, const MAX: usize> Deserialize<'de> for FreeText<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(Self(None)),
            v => Text::<MAX, Trimmed>::from_value(v)
                .map(|t| Some(t.into_string()).filter(|t| !t.is_empty()))
                .map(Self)
                .map_err(|r| D::Error::custom(Text::<MAX, Trimmed>::words(r))),
        }
    }
}

documented!(
    const MAX: FreeText<MAX>,
    text_schema(MAX, false, true).description(Some("Free text (trimmed; blank is absent)"))
);

/// Text exactly as sent (an empty string too), at most `MAX` characters;
/// null as absent: a filter, which must match exactly what is stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AsSent<const MAX: usize>(pub Option<String>);

impl<'de, const MAX: usize> Deserialize<'de> for AsSent<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<Text<MAX>>::deserialize(d).map(|t| Self(t.map(Text::into_string)))
    }
}

documented!(const MAX: AsSent<MAX>, text_schema(MAX, false, true));

/// A value with a shape, exactly as sent; empty or null as absent.
fn shaped<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::String(s) if s.is_empty() => Ok(None),
        Value::String(s) => Ok(Some(s)),
        _ => Err(must_be_string()),
    }
}

/// `ExponentPushToken[...]`, `ExpoPushToken[...]` or another
/// `<Name>PushToken[<opaque>]`, exactly as issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushToken(pub String);

impl<'de> Deserialize<'de> for PushToken {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let t = shaped(d)?.ok_or_else(|| D::Error::custom(REQUIRED))?;
        if valid_push_token(&t) {
            Ok(Self(t))
        } else {
            Err(D::Error::custom(PUSH_TOKEN_SHAPE))
        }
    }
}

documented!(
    PushToken,
    string_schema(false).pattern(Some(PUSH_TOKEN_PATTERN))
);

/// `ios` or `android`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceType(pub String);

impl<'de> Deserialize<'de> for DeviceType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match shaped(d)?.as_deref() {
            None => Err(D::Error::custom(REQUIRED)),
            Some(t @ ("ios" | "android")) => Ok(Self(t.to_owned())),
            Some(_) => Err(D::Error::custom("must be ios or android")),
        }
    }
}

documented!(
    DeviceType,
    string_schema(false).pattern(Some("^(ios|android)$"))
);

/// A locale tag, e.g. `en-US`; empty as absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locale(pub Option<String>);

impl<'de> Deserialize<'de> for Locale {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match shaped(d)? {
            Some(l) if !valid_locale(&l) => {
                Err(D::Error::custom("must be a locale tag such as en-US"))
            }
            l => Ok(Self(l)),
        }
    }
}

documented!(
    Locale,
    string_schema(true).pattern(Some(r"^(?:[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,3})?$"))
);

/// An IANA zone, e.g. `Europe/Berlin`; empty as absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimeZone(pub Option<String>);

impl<'de> Deserialize<'de> for TimeZone {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match shaped(d)? {
            Some(t) if !valid_timezone(&t) => Err(D::Error::custom(
                "must be an IANA time zone name such as Europe/Berlin",
            )),
            t => Ok(Self(t)),
        }
    }
}

/// The zone names keel knows (the IANA database it is built with), or
/// empty.
fn zones() -> ObjectBuilder {
    let names = [Value::Null, Value::from("")].into_iter().chain(
        chrono_tz::TZ_VARIANTS
            .iter()
            .map(|tz| Value::from(tz.name())),
    );
    string_schema(true).enum_values(Some(names))
}

documented!(TimeZone, zones());

/// A moment with an offset (ISO 8601), at most 64 characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment(pub DateTime<Utc>);

impl<'de> Deserialize<'de> for Moment {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s.chars().count() > 64 => Err(too_long(64)),
            Value::String(s) => DateTime::parse_from_rfc3339(s.trim())
                .map(|t| Self(t.with_timezone(&Utc)))
                .map_err(|_| D::Error::custom("must be an ISO 8601 date-time with an offset")),
            _ => Err(must_be_string()),
        }
    }
}

documented!(
    Moment,
    string_schema(true)
        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::DateTime
        )))
        .max_length(Some(64))
);

/// A wall-clock time, `HH:MM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WallClock(pub NaiveTime);

impl<'de> Deserialize<'de> for WallClock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s.chars().count() > 5 => Err(too_long(5)),
            Value::String(s) => hhmm(&s)
                .map(Self)
                .ok_or_else(|| D::Error::custom("must be HH:MM (00:00 to 23:59)")),
            _ => Err(must_be_string()),
        }
    }
}

fn hhmm(raw: &str) -> Option<NaiveTime> {
    let (h, m) = raw.split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    NaiveTime::from_hms_opt(h.parse().ok()?, m.parse().ok()?, 0)
}

documented!(
    WallClock,
    string_schema(true).pattern(Some("^([01][0-9]|2[0-3]):[0-5][0-9]$"))
);

/// A JSON object of at most 3,072 bytes (as JSON): what a notification
/// carries to the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data(pub Map<String, Value>);

impl<'de> Deserialize<'de> for Data {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(o) if Value::Object(o.clone()).to_string().len() <= 3072 => Ok(Self(o)),
            Value::Object(_) => Err(D::Error::custom("must be at most 3072 bytes of JSON")),
            _ => Err(D::Error::custom("must be an object")),
        }
    }
}

documented!(
    Data,
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Object, Type::Null]))
        .description(Some(
            "Handed to the app with the notification; at most 3,072 bytes as JSON"
        ))
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn each_value_says_what_is_wrong() {
        assert_eq!(
            read::<Required<3>>(json!("  ")).err().as_deref(),
            Some(REQUIRED)
        );
        assert_eq!(
            read::<Required<3>>(json!(null)).err().as_deref(),
            Some(REQUIRED)
        );
        assert_eq!(
            read::<Required<3>>(json!("abcd")).err().as_deref(),
            Some("must be at most 3 characters")
        );
        assert_eq!(
            read::<Required<3>>(json!(5)).err().as_deref(),
            Some("must be a string")
        );
        assert_eq!(
            read::<FreeText<9>>(json!("  x  ")),
            Ok(FreeText(Some("x".into())))
        );
        assert_eq!(read::<FreeText<9>>(json!(" ")), Ok(FreeText(None)));
        assert_eq!(read::<Locale>(json!("")), Ok(Locale(None)));
        assert!(read::<Locale>(json!("english please")).is_err());
        assert_eq!(
            read::<WallClock>(json!("09:30"))
                .map(|w| w.0.to_string())
                .ok()
                .as_deref(),
            Some("09:30:00")
        );
        assert!(read::<WallClock>(json!("25:00")).is_err());
        assert!(read::<Moment>(json!("next week")).is_err());
        assert!(read::<Data>(json!({"k": "x".repeat(3100)})).is_err());
        assert_eq!(
            read::<DeviceType>(json!("")).err().as_deref(),
            Some(REQUIRED)
        );
    }
}
