//! A device's registration as POST /register takes it, checked field by
//! field, and the checks the import shares.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::domain::values::{DeviceType, FreeText, Locale, PushToken, TimeZone};

pub use crate::domain::params::{ParamError, invalid, missing};

/// A registration, checked (see [`RegistrationBody`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    pub push_token: String,
    pub device_type: String,
    pub device_model: Option<String>,
    pub os_version: Option<String>,
    pub app_version: Option<String>,
    pub locale: Option<String>,
    pub timezone: Option<String>,
    pub user_label: Option<String>,
}

/// POST /register's body (and a row of a device import), each field
/// checked by its type.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct RegistrationBody {
    #[schema(inline)]
    push_token: PushToken,
    #[schema(inline)]
    device_type: DeviceType,
    // Free text (trimmed; blank is absent).
    #[serde(default)]
    #[schema(inline)]
    device_model: FreeText<100>,
    #[serde(default)]
    #[schema(inline)]
    os_version: FreeText<50>,
    #[serde(default)]
    #[schema(inline)]
    app_version: FreeText<50>,
    // A locale tag, e.g. `en-US` (empty: none).
    #[serde(default)]
    #[schema(inline)]
    locale: Locale,
    // An IANA zone, e.g. `Europe/Berlin` (empty: none).
    #[serde(default)]
    #[schema(inline)]
    timezone: TimeZone,
    #[serde(default)]
    #[schema(inline)]
    user_label: FreeText<255>,
}

impl From<RegistrationBody> for Registration {
    fn from(b: RegistrationBody) -> Self {
        Self {
            push_token: b.push_token.0,
            device_type: b.device_type.0,
            device_model: b.device_model.0,
            os_version: b.os_version.0,
            app_version: b.app_version.0,
            locale: b.locale.0,
            timezone: b.timezone.0,
            user_label: b.user_label.0,
        }
    }
}

impl Registration {
    /// Checks a registration given as fields (a row of a device import),
    /// naming the field at fault as the body's extractor does.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, ParamError> {
        keel_platform::values::read::<RegistrationBody>(Value::Object(body.clone()))
            .map(Self::from)
            .map_err(|f| crate::domain::params::from_field(&f.path, &f.problem))
    }
}

#[cfg(test)]
mod tests {
    use crate::domain::values::{valid_locale, valid_push_token, valid_timezone};

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
