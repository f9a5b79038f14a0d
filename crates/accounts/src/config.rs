//! accounts configuration (see docs/accounts.md).

use std::path::PathBuf;
use std::time::Duration;

use keel_platform::config::{ConfigError, Secret, Source};

#[derive(Debug, Clone)]
pub struct Config {
    /// HS256 key for access tokens; generated under the data directory if unset.
    pub jwt_secret: Option<Secret>,
    pub access_ttl: Duration,
    pub refresh_ttl: Duration,
    pub totp_issuer: String,
    /// DB-IP Lite style CSV: `ip_start,ip_end,country[,region,city...]`.
    pub geoip_csv: Option<PathBuf>,
    /// Prepended to tokens in mails, e.g. `https://app.example.com/verify-email/`.
    pub email_verify_link: Option<String>,
    pub email_change_link: Option<String>,
    /// Least time between two email-change confirmation mails of a user.
    pub email_resend_interval: Duration,
    /// Prefix of every accounts route (default none).
    pub path_prefix: String,
    /// How long an authenticated session may be served from memory; unset
    /// means 2 s on SQLite and off on PostgreSQL.
    pub session_cache: Option<Duration>,
    /// Sign-in attempts a minute from one client address (0: no limit).
    pub logins_per_minute: u64,
    /// Registrations a minute from one client address (0: no limit).
    pub registrations_per_minute: u64,
}

impl Config {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let jwt_secret = src.secret("KEEL_ACCOUNTS_JWT_SECRET");
        if jwt_secret.as_ref().is_some_and(|s| s.expose().len() < 32) {
            return Err(ConfigError::invalid(
                "KEEL_ACCOUNTS_JWT_SECRET",
                "must be at least 32 characters",
            ));
        }
        let prefix = src.string_or("KEEL_ACCOUNTS_PATH_PREFIX", "");
        let prefix = prefix.trim_end_matches('/').to_owned();
        if !prefix.is_empty() && !prefix.starts_with('/') {
            return Err(ConfigError::invalid(
                "KEEL_ACCOUNTS_PATH_PREFIX",
                "must start with /",
            ));
        }
        let access_ttl = src.secs_or(
            "KEEL_ACCOUNTS_ACCESS_TTL_SECS",
            Duration::from_secs(15 * 60),
        )?;
        if access_ttl.is_zero() {
            return Err(ConfigError::invalid(
                "KEEL_ACCOUNTS_ACCESS_TTL_SECS",
                "must be positive",
            ));
        }
        Ok(Self {
            jwt_secret,
            access_ttl,
            refresh_ttl: src.secs_or(
                "KEEL_ACCOUNTS_REFRESH_TTL_SECS",
                Duration::from_secs(30 * 24 * 3600),
            )?,
            totp_issuer: src.string_or("KEEL_ACCOUNTS_TOTP_ISSUER", "keel"),
            geoip_csv: src.get("KEEL_ACCOUNTS_GEOIP_CSV").map(PathBuf::from),
            email_verify_link: src
                .get("KEEL_ACCOUNTS_VERIFY_EMAIL_LINK")
                .map(str::to_owned),
            email_change_link: src
                .get("KEEL_ACCOUNTS_CHANGE_EMAIL_LINK")
                .map(str::to_owned),
            email_resend_interval: src.secs_or(
                "KEEL_ACCOUNTS_EMAIL_RESEND_INTERVAL_SECS",
                Duration::from_secs(60),
            )?,
            path_prefix: prefix,
            session_cache: src
                .parse::<u64>("KEEL_ACCOUNTS_SESSION_CACHE_SECS")?
                .map(Duration::from_secs),
            logins_per_minute: src.parse_or("KEEL_ACCOUNTS_LOGINS_PER_MINUTE", 30)?,
            registrations_per_minute: src.parse_or("KEEL_ACCOUNTS_REGISTRATIONS_PER_MINUTE", 10)?,
        })
    }
}
