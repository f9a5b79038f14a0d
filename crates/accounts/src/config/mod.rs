//! accounts configuration (see docs/accounts.md).

mod passkeys;

pub use passkeys::{AndroidApp, Passkeys};

use std::path::PathBuf;
use std::time::Duration;

use keel_platform::config::{ConfigError, Secret, Source};
use keel_platform::jobs::cron::Cron;

// The variables accounts reads (the passkeys' are in `passkeys`).
const ACCESS_TTL_SECS: &str = "KEEL_ACCOUNTS_ACCESS_TTL_SECS";
/// Where accounts listens (the launch reads it too).
pub const ADDR: &str = "KEEL_ACCOUNTS_ADDR";
pub const DEFAULT_ADDR: &str = "127.0.0.1:8081";
const APP_NAME: &str = "KEEL_ACCOUNTS_APP_NAME";
const APP_URL: &str = "KEEL_ACCOUNTS_APP_URL";
const CHANGE_EMAIL_LINK: &str = "KEEL_ACCOUNTS_CHANGE_EMAIL_LINK";
const EMAIL_RESEND_INTERVAL_SECS: &str = "KEEL_ACCOUNTS_EMAIL_RESEND_INTERVAL_SECS";
const GEOIP_CSV: &str = "KEEL_ACCOUNTS_GEOIP_CSV";
const JWT_SECRET: &str = "KEEL_ACCOUNTS_JWT_SECRET";
const LOGINS_PER_MINUTE: &str = "KEEL_ACCOUNTS_LOGINS_PER_MINUTE";
const PATH_PREFIX: &str = "KEEL_ACCOUNTS_PATH_PREFIX";
const PUBLIC_URL: &str = "KEEL_ACCOUNTS_PUBLIC_URL";
const REFRESH_TTL_SECS: &str = "KEEL_ACCOUNTS_REFRESH_TTL_SECS";
const REGISTRATIONS_PER_MINUTE: &str = "KEEL_ACCOUNTS_REGISTRATIONS_PER_MINUTE";
const SESSION_CACHE_SECS: &str = "KEEL_ACCOUNTS_SESSION_CACHE_SECS";
const TOTP_ISSUER: &str = "KEEL_ACCOUNTS_TOTP_ISSUER";
const VERIFY_EMAIL_LINK: &str = "KEEL_ACCOUNTS_VERIFY_EMAIL_LINK";
const WEEKLY_MAIL_CRON: &str = "KEEL_ACCOUNTS_WEEKLY_MAIL_CRON";

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
    /// The app's name in mails (`KEEL_ACCOUNTS_APP_NAME`, else the TOTP issuer).
    pub app_name: String,
    /// The weekly goals mail.
    pub weekly_mail: WeeklyMail,
    /// Passkeys, when a relying party is configured.
    pub passkeys: Option<Passkeys>,
}

/// When and from where the weekly goals mail goes out.
#[derive(Debug, Clone)]
pub struct WeeklyMail {
    /// When each week's mail starts (`KEEL_ACCOUNTS_WEEKLY_MAIL_CRON`, UTC).
    pub cron: Cron,
    /// Where this service is reached from outside, path prefix included
    /// (`KEEL_ACCOUNTS_PUBLIC_URL`): the unsubscribe link is made from it.
    /// Without it no weekly mail is sent.
    pub public_url: Option<String>,
    /// A link to the app in the mail (`KEEL_ACCOUNTS_APP_URL`), if set.
    pub app_url: Option<String>,
}

impl WeeklyMail {
    fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let cron = keel_platform::jobs::cron::var(src, WEEKLY_MAIL_CRON, "0 8 * * 1")?;
        let public_url = src
            .get(PUBLIC_URL)
            .map(|u| u.trim_end_matches('/').to_owned());
        if let Some(u) = &public_url {
            check_public_url(u).map_err(|why| ConfigError::invalid(PUBLIC_URL, why))?;
        }
        Ok(Self {
            cron,
            public_url,
            app_url: src.get(APP_URL).map(str::to_owned),
        })
    }
}

/// An `https://` URL (mailbox providers want one in `List-Unsubscribe`);
/// `http://` only on a loopback host, for a test or a local try.
fn check_public_url(u: &str) -> Result<(), &'static str> {
    let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"];
    let local = loopback.iter().any(|l| {
        u.strip_prefix(l)
            .is_some_and(|r| r.is_empty() || r.starts_with([':', '/']))
    });
    if u.starts_with("https://") && u.len() > "https://".len() || local {
        Ok(())
    } else {
        Err("must be an https:// URL (http:// only on a loopback host)")
    }
}

impl Config {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let jwt_secret = src.secret(JWT_SECRET);
        if jwt_secret.as_ref().is_some_and(|s| s.expose().len() < 32) {
            return Err(ConfigError::invalid(
                JWT_SECRET,
                "must be at least 32 characters",
            ));
        }
        let prefix = src.string_or(PATH_PREFIX, "");
        let prefix = prefix.trim_end_matches('/').to_owned();
        if !prefix.is_empty() && !prefix.starts_with('/') {
            return Err(ConfigError::invalid(PATH_PREFIX, "must start with /"));
        }
        let access_ttl = src.secs_or(ACCESS_TTL_SECS, Duration::from_secs(15 * 60))?;
        if access_ttl.is_zero() {
            return Err(ConfigError::invalid(ACCESS_TTL_SECS, "must be positive"));
        }
        let listen = keel_platform::config::addr(src, ADDR, DEFAULT_ADDR)?;
        keel_platform::config::mail::require_delivery(src, listen)?;
        let totp_issuer = src.string_or(TOTP_ISSUER, "keel");
        let app_name = src.string_or(APP_NAME, &totp_issuer);
        Ok(Self {
            jwt_secret,
            passkeys: Passkeys::from_source(src, &app_name)?,
            app_name,
            weekly_mail: WeeklyMail::from_source(src)?,
            access_ttl,
            refresh_ttl: src.secs_or(REFRESH_TTL_SECS, Duration::from_secs(30 * 24 * 3600))?,
            totp_issuer,
            geoip_csv: src.get(GEOIP_CSV).map(PathBuf::from),
            email_verify_link: src.get(VERIFY_EMAIL_LINK).map(str::to_owned),
            email_change_link: src.get(CHANGE_EMAIL_LINK).map(str::to_owned),
            email_resend_interval: src
                .secs_or(EMAIL_RESEND_INTERVAL_SECS, Duration::from_secs(60))?,
            path_prefix: prefix,
            session_cache: src
                .parse::<u64>(SESSION_CACHE_SECS)?
                .map(Duration::from_secs),
            logins_per_minute: src.parse_or(LOGINS_PER_MINUTE, 30)?,
            registrations_per_minute: src.parse_or(REGISTRATIONS_PER_MINUTE, 10)?,
        })
    }
}
