//! svc configuration (see docs/svc.md). Site settings live in the database.

use std::time::Duration;

use keel_platform::config::{ConfigError, Source};

pub const NAMESPACE: &str = "/svc/v1";

#[derive(Debug, Clone)]
pub struct Config {
    /// The host site's REST root, before `/svc/v1` (default empty).
    pub rest_root: String,
    pub appcheck_jwks_url: String,
    /// At most 6 hours (Firebase's guidance).
    pub appcheck_jwks_max_age: Duration,
    pub session_ttl: Duration,
    /// Bodies larger than this are refused before reading the rest.
    pub submit_hard_limit: usize,
}

impl Config {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let root = src.string_or("KEEL_SVC_REST_ROOT", "");
        let root = root.trim_end_matches('/');
        if !root.is_empty() && !root.starts_with('/') {
            return Err(ConfigError::invalid(
                "KEEL_SVC_REST_ROOT",
                "must start with / (e.g. /wp-json)",
            ));
        }
        let max_age = src.secs_or(
            "KEEL_APPCHECK_JWKS_MAX_AGE_SECS",
            Duration::from_secs(6 * 3600),
        )?;
        if max_age > Duration::from_secs(6 * 3600) {
            return Err(ConfigError::invalid(
                "KEEL_APPCHECK_JWKS_MAX_AGE_SECS",
                "App Check keys must not be cached longer than 6 hours (21600)",
            ));
        }
        Ok(Self {
            rest_root: root.to_owned(),
            appcheck_jwks_url: src.string_or(
                "KEEL_APPCHECK_JWKS_URL",
                "https://firebaseappcheck.googleapis.com/v1/jwks",
            ),
            appcheck_jwks_max_age: max_age,
            session_ttl: src.secs_or(
                "KEEL_SVC_SESSION_TTL_SECS",
                Duration::from_secs(2 * 24 * 3600),
            )?,
            submit_hard_limit: 8 * 1024 * 1024,
        })
    }

    pub fn base_path(&self) -> String {
        format!("{}{NAMESPACE}", self.rest_root)
    }
}
