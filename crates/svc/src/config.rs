//! svc configuration (see docs/svc.md). Site settings live in the database.

use std::time::Duration;

use keel_platform::config::{ConfigError, Source};

// The names of the variables read here.
const APPCHECK_JWKS_MAX_AGE_SECS: &str = "KEEL_APPCHECK_JWKS_MAX_AGE_SECS";
const APPCHECK_JWKS_URL: &str = "KEEL_APPCHECK_JWKS_URL";
const EXPO_ACCESS_TOKEN: &str = "KEEL_EXPO_ACCESS_TOKEN";
const EXPO_CONCURRENCY: &str = "KEEL_EXPO_CONCURRENCY";
const EXPO_RATE_PER_SECOND: &str = "KEEL_EXPO_RATE_PER_SECOND";
const EXPO_RECEIPT_DELAY_SECS: &str = "KEEL_EXPO_RECEIPT_DELAY_SECS";
const EXPO_URL: &str = "KEEL_EXPO_URL";
const SVC_IDEMPOTENCY_PURGE_CRON: &str = "KEEL_SVC_IDEMPOTENCY_PURGE_CRON";
const SVC_IMPORT_LIMIT_BYTES: &str = "KEEL_SVC_IMPORT_LIMIT_BYTES";
const SVC_IMPORT_MAX_ROWS: &str = "KEEL_SVC_IMPORT_MAX_ROWS";
const SVC_REST_ROOT: &str = "KEEL_SVC_REST_ROOT";
const SVC_SESSION_TTL_SECS: &str = "KEEL_SVC_SESSION_TTL_SECS";

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
    pub expo: ExpoConfig,
}

/// Where and how fast push notifications go.
#[derive(Debug, Clone)]
pub struct ExpoConfig {
    pub url: String,
    pub access_token: Option<keel_platform::config::Secret>,
    /// Notifications per second, never exceeded in any one-second window; 0 lifts the limit.
    pub rate_per_second: u32,
    /// Requests in flight at most.
    pub concurrency: usize,
    pub receipt_delay: Duration,
    /// Largest device import.
    pub import_limit: usize,
    /// Rows one device import reads at most.
    pub import_max_rows: u64,
    /// When expired Idempotency-Keys are forgotten (hourly).
    pub idempotency_purge_cron: keel_platform::jobs::cron::Cron,
}

impl Config {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let root = src.string_or(SVC_REST_ROOT, "");
        let root = root.trim_end_matches('/');
        if !root.is_empty() && !root.starts_with('/') {
            return Err(ConfigError::invalid(
                SVC_REST_ROOT,
                "must start with / (e.g. /wp-json)",
            ));
        }
        let max_age = src.secs_or(APPCHECK_JWKS_MAX_AGE_SECS, Duration::from_secs(6 * 3600))?;
        if max_age > Duration::from_secs(6 * 3600) {
            return Err(ConfigError::invalid(
                APPCHECK_JWKS_MAX_AGE_SECS,
                "App Check keys must not be cached longer than 6 hours (21600)",
            ));
        }
        Ok(Self {
            rest_root: root.to_owned(),
            appcheck_jwks_url: src.string_or(
                APPCHECK_JWKS_URL,
                "https://firebaseappcheck.googleapis.com/v1/jwks",
            ),
            appcheck_jwks_max_age: max_age,
            session_ttl: src.secs_or(SVC_SESSION_TTL_SECS, Duration::from_secs(2 * 24 * 3600))?,
            submit_hard_limit: 8 * 1024 * 1024,
            expo: expo(src)?,
        })
    }

    pub fn base_path(&self) -> String {
        format!("{}{NAMESPACE}", self.rest_root)
    }
}

fn expo(src: &Source) -> Result<ExpoConfig, ConfigError> {
    let concurrency: usize = src.parse_or(EXPO_CONCURRENCY, 6)?;
    if !(1..=64).contains(&concurrency) {
        return Err(ConfigError::invalid(EXPO_CONCURRENCY, "must be 1 to 64"));
    }
    let rate: u32 = src.parse_or(EXPO_RATE_PER_SECOND, 600)?;
    if rate != 0 && rate < 200 {
        return Err(ConfigError::invalid(
            EXPO_RATE_PER_SECOND,
            "must be 0 (no limit) or at least 200 (a batch of 100 plus its refill)",
        ));
    }
    let import_max_rows: u64 = src.parse_or(SVC_IMPORT_MAX_ROWS, 100_000)?;
    if import_max_rows == 0 {
        return Err(ConfigError::invalid(
            SVC_IMPORT_MAX_ROWS,
            "must be at least 1",
        ));
    }
    Ok(ExpoConfig {
        url: src
            .string_or(EXPO_URL, "https://exp.host")
            .trim_end_matches('/')
            .to_owned(),
        access_token: src.secret(EXPO_ACCESS_TOKEN),
        rate_per_second: rate,
        concurrency,
        receipt_delay: src.secs_or(EXPO_RECEIPT_DELAY_SECS, Duration::from_secs(15 * 60))?,
        import_limit: src.parse_or(SVC_IMPORT_LIMIT_BYTES, 20 * 1024 * 1024)?,
        import_max_rows,
        idempotency_purge_cron: keel_platform::jobs::cron::var(
            src,
            SVC_IDEMPOTENCY_PURGE_CRON,
            "17 * * * *",
        )?,
    })
}
