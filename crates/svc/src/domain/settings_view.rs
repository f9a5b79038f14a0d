//! The settings as admins see them, and what a change changed.

use keel_platform::audit::Entry;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::settings::Settings;

/// The settings as admins see them (debug tokens only counted).
#[derive(Debug, Serialize, ToSchema)]
pub struct SettingsView {
    pub allowed_origins: Vec<String>,
    pub forms_allowlist: Vec<String>,
    pub push_enabled: bool,
    pub appcheck_project_number: Option<String>,
    pub appcheck_app_ids: Vec<String>,
    /// How many debug tokens are configured (they are stored hashed).
    pub appcheck_debug_tokens: usize,
    pub submission_rate_limit: u32,
    pub payload_limit_bytes: u64,
}

impl SettingsView {
    /// The settings that differ, old and new, as an audit entry (`None` when
    /// nothing changed). The view holds no secret: debug tokens are counted.
    pub fn changes(before: &Self, after: &Self, tokens_given: bool) -> Option<Entry> {
        let (Ok(Value::Object(b)), Ok(Value::Object(a))) =
            (serde_json::to_value(before), serde_json::to_value(after))
        else {
            return None;
        };
        let keys: Vec<&String> = a
            .keys()
            .filter(|k| b.get(*k) != a.get(*k) || (tokens_given && *k == "appcheck_debug_tokens"))
            .collect();
        if keys.is_empty() {
            return None;
        }
        let pick = |m: &serde_json::Map<String, Value>| {
            Value::Object(keys.iter().map(|k| ((*k).clone(), m[*k].clone())).collect())
        };
        let subject = keys
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        Some(
            Entry::new(crate::NAME, "svc_settings_changed")
                .on(subject)
                .change(Some(pick(&b)), Some(pick(&a))),
        )
    }
}

impl From<&Settings> for SettingsView {
    fn from(s: &Settings) -> Self {
        Self {
            allowed_origins: s.allowed_origins.clone(),
            forms_allowlist: s.forms_allowlist.clone(),
            push_enabled: s.push_enabled,
            appcheck_project_number: s.appcheck_project_number.clone(),
            appcheck_app_ids: s.appcheck_app_ids.clone(),
            appcheck_debug_tokens: s.appcheck_debug_token_hashes.len(),
            submission_rate_limit: s.submission_rate_limit,
            payload_limit_bytes: s.payload_limit_bytes,
        }
    }
}
