//! A device's registration as POST /register takes it, checked field by
//! field, and the checks the import shares.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

pub use crate::domain::params::{ParamError, invalid, missing};

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

/// A registration, checked by [`Registration::parse`]; documents POST /register's body.
#[derive(Debug, Clone, PartialEq, Eq, utoipa::ToSchema)]
pub struct Registration {
    /// `ExponentPushToken[...]`, `ExpoPushToken[...]` or another
    /// `<Name>PushToken[<opaque>]`, exactly as issued.
    #[schema(pattern = r"^[A-Za-z][A-Za-z0-9]{0,31}PushToken\[[!-Z\\^-~]{1,200}\]$")]
    pub push_token: String,
    /// `ios` or `android`
    #[schema(pattern = "^(ios|android)$")]
    pub device_type: String,
    /// Free text (trimmed; blank is absent).
    #[schema(max_length = 100)]
    pub device_model: Option<String>,
    #[schema(max_length = 50)]
    pub os_version: Option<String>,
    #[schema(max_length = 50)]
    pub app_version: Option<String>,
    /// A locale tag, e.g. `en-US` (empty: none).
    #[schema(pattern = r"^(?:[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,3})?$")]
    pub locale: Option<String>,
    /// An IANA zone, e.g. `Europe/Berlin` (empty: none).
    #[schema(schema_with = timezone_schema)]
    pub timezone: Option<String>,
    #[schema(max_length = 255)]
    pub user_label: Option<String>,
}

/// The zone names keel knows (the IANA database it is built with), or
/// empty.
fn timezone_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    let names = [Value::Null, Value::from("")].into_iter().chain(
        chrono_tz::TZ_VARIANTS
            .iter()
            .map(|tz| Value::from(tz.name())),
    );
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .enum_values(Some(names))
        .build()
}

/// Free text: trimmed, blank as absent, at most `max` characters.
fn text(body: &Map<String, Value>, field: &str, max: usize) -> Result<Option<String>, ParamError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.chars().count() > max => {
            Err(invalid(field, &format!("must be at most {max} characters")))
        }
        Some(Value::String(s)) if keel_platform::http::input::is_blank(s) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
        Some(_) => Err(invalid(field, "must be a string")),
    }
}

/// A value with a shape: exactly as sent (never trimmed); empty as absent.
fn shaped(body: &Map<String, Value>, field: &str) -> Result<Option<String>, ParamError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(field, "must be a string")),
    }
}

impl Registration {
    /// Checks a registration body (JSON object), naming the field at fault.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, ParamError> {
        let push_token = shaped(body, "push_token")?.ok_or_else(|| missing("push_token"))?;
        if !valid_push_token(&push_token) {
            return Err(invalid("push_token", PUSH_TOKEN_SHAPE));
        }
        let device_type = shaped(body, "device_type")?.ok_or_else(|| missing("device_type"))?;
        if device_type != "ios" && device_type != "android" {
            return Err(invalid("device_type", "must be ios or android"));
        }
        let locale = shaped(body, "locale")?;
        if locale.as_deref().is_some_and(|l| !valid_locale(l)) {
            return Err(invalid("locale", "must be a locale tag such as en-US"));
        }
        let timezone = shaped(body, "timezone")?;
        if timezone.as_deref().is_some_and(|t| !valid_timezone(t)) {
            return Err(invalid(
                "timezone",
                "must be an IANA time zone name such as Europe/Berlin",
            ));
        }
        Ok(Self {
            push_token,
            device_type,
            device_model: text(body, "device_model", 100)?,
            os_version: text(body, "os_version", 50)?,
            app_version: text(body, "app_version", 50)?,
            locale,
            timezone,
            user_label: text(body, "user_label", 255)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_locale_and_zone_shapes() {
        assert!(valid_push_token(
            "ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]"
        ));
        assert!(valid_push_token("ExpoPushToken[abc-DEF_123]"));
        assert!(
            valid_push_token("ProviderPushToken[abc]"),
            "the documented shape"
        );
        assert!(valid_push_token("FcmPushToken[a:b/c+d=.~]"));
        assert!(!valid_push_token("ExponentPushToken[]"));
        assert!(!valid_push_token("ExponentPushToken[a b]"));
        assert!(!valid_push_token("ExponentPushToken[a]b]"));
        assert!(!valid_push_token("ExponentPushToken[a\u{e9}]"));
        assert!(!valid_push_token("PushToken[abc]"));
        assert!(!valid_push_token("9PushToken[abc]"));
        assert!(!valid_push_token("Expo-PushToken[abc]"));
        assert!(!valid_push_token(&format!(
            "ExpoPushToken[{}]",
            "a".repeat(201)
        )));
        assert!(!valid_push_token("apns:abcdef"));
        for ok in ["en", "en-US", "pt_BR", "zh-Hant-TW"] {
            assert!(valid_locale(ok), "{ok}");
        }
        for bad in ["english", "e", "en-", "en US"] {
            assert!(!valid_locale(bad), "{bad}");
        }
        assert!(valid_timezone("Europe/Berlin") && valid_timezone("UTC"));
        assert!(!valid_timezone("Mars/Olympus"));
    }
}
