//! Site settings: stored in `svc_settings` (one row per key, JSON values),
//! changed by `keel svc settings` or the admin REST routes, read through a
//! one-second cache so changes take effect without a restart (at once in the
//! process that made them).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use chrono::Utc;
use keel_platform::crypto::sha256_hex;
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{DbErr, EntityTrait, Set};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::domain::forms::valid_form_id;
use crate::entity::setting;

/// The settings in effect.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Origins allowed cross-origin requests; empty: none.
    pub allowed_origins: Vec<String>,
    /// Forms the public API serves.
    pub forms_allowlist: Vec<String>,
    pub push_enabled: bool,
    pub appcheck_project_number: Option<String>,
    pub appcheck_app_ids: Vec<String>,
    /// SHA-256 of each accepted debug token.
    pub appcheck_debug_token_hashes: Vec<String>,
    /// Submissions per minute per verified client.
    pub submission_rate_limit: u32,
    pub payload_limit_bytes: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            allowed_origins: Vec::new(),
            forms_allowlist: Vec::new(),
            push_enabled: true,
            appcheck_project_number: None,
            appcheck_app_ids: Vec::new(),
            appcheck_debug_token_hashes: Vec::new(),
            submission_rate_limit: 10,
            payload_limit_bytes: 64 * 1024,
        }
    }
}

pub use super::settings_view::SettingsView;

/// A partial update; absent fields stay as they are.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsPatch {
    /// Origins (`scheme://host[:port]`, no path) whose browsers may call the
    /// form API.
    #[schema(schema_with = origins_schema)]
    pub allowed_origins: Option<Vec<String>>,
    /// Form ids the form API serves.
    #[schema(schema_with = form_ids_schema)]
    pub forms_allowlist: Option<Vec<String>>,
    pub push_enabled: Option<bool>,
    /// The Firebase project number (digits); empty string clears it.
    #[schema(pattern = "^[0-9]*$")]
    pub appcheck_project_number: Option<String>,
    pub appcheck_app_ids: Option<Vec<String>>,
    /// Replaces the accepted debug tokens (stored hashed).
    pub appcheck_debug_tokens: Option<Vec<String>>,
    /// Submissions a minute from one verified app: 1 to 100,000,000.
    #[serde(default, deserialize_with = "keel_platform::values::whole")]
    #[schema(minimum = 1, maximum = 100_000_000)]
    pub submission_rate_limit: Option<u32>,
    /// 256 to 8,388,608.
    #[serde(default, deserialize_with = "keel_platform::values::whole")]
    #[schema(minimum = 256, maximum = 8_388_608)]
    pub payload_limit_bytes: Option<u64>,
}

fn origins_schema() -> utoipa::openapi::schema::Array {
    list_of(keel_platform::http::patterns::HTTP_ORIGIN)
}

fn form_ids_schema() -> utoipa::openapi::schema::Array {
    list_of(crate::domain::forms::FORM_ID_PATTERN)
}

/// A list of strings matching `pattern`, or `null`.
fn list_of(pattern: &str) -> utoipa::openapi::schema::Array {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
    ArrayBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(pattern)),
        )
        .build()
}

/// A setting's value that is refused, saying why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid parameter: {key} {problem}")]
pub struct InvalidSetting {
    pub key: String,
    pub problem: String,
}

/// Why the settings could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(transparent)]
    Invalid(#[from] InvalidSetting),
    #[error(transparent)]
    Db(#[from] DbErr),
}

fn invalid(key: &str, problem: &str) -> InvalidSetting {
    InvalidSetting {
        key: key.to_owned(),
        problem: problem.to_owned(),
    }
}

impl SettingsPatch {
    /// One `key value` pair from the command line (lists comma-separated).
    pub fn from_pair(key: &str, value: &str) -> Result<Self, InvalidSetting> {
        let list = || -> Vec<String> {
            value
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let number = |max: u64| value.trim().parse::<u64>().ok().filter(|n| *n <= max);
        let mut p = Self::default();
        match key {
            "allowed_origins" => p.allowed_origins = Some(list()),
            "forms_allowlist" => p.forms_allowlist = Some(list()),
            "push_enabled" => {
                p.push_enabled = Some(match value.trim() {
                    "true" | "on" | "1" | "yes" => true,
                    "false" | "off" | "0" | "no" => false,
                    _ => return Err(invalid(key, "must be true or false")),
                });
            }
            "appcheck_project_number" => p.appcheck_project_number = Some(value.trim().to_owned()),
            "appcheck_app_ids" => p.appcheck_app_ids = Some(list()),
            "appcheck_debug_tokens" => p.appcheck_debug_tokens = Some(list()),
            "submission_rate_limit" => {
                let n = number(u64::from(u32::MAX))
                    .ok_or_else(|| invalid(key, "must be a whole number"))?;
                p.submission_rate_limit = Some(u32::try_from(n).unwrap_or(u32::MAX));
            }
            "payload_limit_bytes" => {
                p.payload_limit_bytes =
                    Some(number(u64::MAX).ok_or_else(|| invalid(key, "must be a whole number"))?);
            }
            other => return Err(invalid(other, "is not a setting")),
        }
        Ok(p)
    }

    /// Checks every given value; the (key, JSON) rows to write.
    fn rows(self) -> Result<Vec<(&'static str, Value)>, InvalidSetting> {
        let mut rows: Vec<(&'static str, Value)> = Vec::new();
        if let Some(origins) = self.allowed_origins {
            for o in &origins {
                if !valid_origin(o) {
                    return Err(invalid(
                        "allowed_origins",
                        &format!("has {o:?}, which is not scheme://host[:port]"),
                    ));
                }
            }
            rows.push(("allowed_origins", Value::from(origins)));
        }
        if let Some(forms) = self.forms_allowlist {
            if let Some(bad) = forms.iter().find(|f| !valid_form_id(f)) {
                return Err(invalid(
                    "forms_allowlist",
                    &format!("has {bad:?}, which is not a form id"),
                ));
            }
            rows.push(("forms_allowlist", Value::from(forms)));
        }
        if let Some(on) = self.push_enabled {
            rows.push(("push_enabled", Value::from(on)));
        }
        if let Some(number) = self.appcheck_project_number {
            if !number.is_empty() && !number.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid(
                    "appcheck_project_number",
                    "must be digits (the Firebase project number)",
                ));
            }
            rows.push((
                "appcheck_project_number",
                if number.is_empty() {
                    Value::Null
                } else {
                    Value::from(number)
                },
            ));
        }
        if let Some(ids) = self.appcheck_app_ids {
            rows.push(("appcheck_app_ids", Value::from(ids)));
        }
        if let Some(tokens) = self.appcheck_debug_tokens {
            let hashes: Vec<String> = tokens
                .iter()
                .map(|t| sha256_hex(t.trim().as_bytes()))
                .collect();
            rows.push(("appcheck_debug_tokens", Value::from(hashes)));
        }
        if let Some(n) = self.submission_rate_limit {
            if !(1..=100_000_000).contains(&n) {
                return Err(invalid(
                    "submission_rate_limit",
                    "must be between 1 and 100000000",
                ));
            }
            rows.push(("submission_rate_limit", Value::from(n)));
        }
        if let Some(n) = self.payload_limit_bytes {
            if !(256..=8 * 1024 * 1024).contains(&n) {
                return Err(invalid(
                    "payload_limit_bytes",
                    "must be between 256 and 8388608",
                ));
            }
            rows.push(("payload_limit_bytes", Value::from(n)));
        }
        Ok(rows)
    }
}

fn valid_origin(o: &str) -> bool {
    if !keel_platform::http::patterns::is_http_origin(o) {
        return false;
    }
    let Ok(u) = url::Url::parse(o) else {
        return false;
    };
    matches!(u.scheme(), "http" | "https")
        && u.host_str().is_some()
        && u.path() == "/"
        && !o.ends_with('/')
        && u.query().is_none()
        && u.username().is_empty()
}

fn from_rows(rows: Vec<setting::Model>) -> Settings {
    let map: HashMap<String, Value> = rows
        .into_iter()
        .filter_map(|r| Some((r.key, serde_json::from_str(&r.value).ok()?)))
        .collect();
    let list =
        |k: &str| -> Option<Vec<String>> { serde_json::from_value(map.get(k)?.clone()).ok() };
    let d = Settings::default();
    Settings {
        allowed_origins: list("allowed_origins").unwrap_or(d.allowed_origins),
        forms_allowlist: list("forms_allowlist").unwrap_or(d.forms_allowlist),
        push_enabled: map
            .get("push_enabled")
            .and_then(Value::as_bool)
            .unwrap_or(d.push_enabled),
        appcheck_project_number: map
            .get("appcheck_project_number")
            .and_then(Value::as_str)
            .map(str::to_owned),
        appcheck_app_ids: list("appcheck_app_ids").unwrap_or(d.appcheck_app_ids),
        appcheck_debug_token_hashes: list("appcheck_debug_tokens")
            .unwrap_or(d.appcheck_debug_token_hashes),
        submission_rate_limit: map
            .get("submission_rate_limit")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(d.submission_rate_limit),
        payload_limit_bytes: map
            .get("payload_limit_bytes")
            .and_then(Value::as_u64)
            .unwrap_or(d.payload_limit_bytes),
    }
}

/// The last read and when it was made.
type Cached = Option<(Arc<Settings>, Instant)>;

/// Reads and writes the settings; cheap to clone.
#[derive(Clone)]
pub struct SettingsStore {
    db: Db,
    cache: Arc<RwLock<Cached>>,
    ttl: Duration,
}

impl SettingsStore {
    pub fn new(db: Db) -> Self {
        Self {
            db,
            cache: Arc::new(RwLock::new(None)),
            ttl: Duration::from_secs(1),
        }
    }

    /// The settings in effect (at most one second old).
    pub async fn get(&self) -> Result<Arc<Settings>, DbErr> {
        let cached = self
            .cache
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .filter(|(_, at)| at.elapsed() < self.ttl);
        if let Some((s, _)) = cached {
            return Ok(s);
        }
        let rows = setting::Entity::find().all(self.db.read()).await?;
        let fresh = Arc::new(from_rows(rows));
        *self
            .cache
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((fresh.clone(), Instant::now()));
        Ok(fresh)
    }

    /// Applies `patch` (all of it, or nothing if a value is invalid).
    pub async fn update(&self, patch: SettingsPatch) -> Result<Arc<Settings>, SettingsError> {
        let rows = patch.rows()?;
        let now = Utc::now();
        let txn = self.db.begin_write().await?;
        for (key, value) in rows {
            setting::Entity::insert(setting::ActiveModel {
                key: Set(key.to_owned()),
                value: Set(value.to_string()),
                updated_at: Set(now),
            })
            .on_conflict(
                OnConflict::column(setting::Column::Key)
                    .update_columns([setting::Column::Value, setting::Column::UpdatedAt])
                    .to_owned(),
            )
            .exec_without_returning(&txn)
            .await?;
        }
        txn.commit().await?;
        *self
            .cache
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        Ok(self.get().await?)
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
