//! Typed configuration, built once at start. Every value has a documented
//! variable (README, "Configuration"); a bad value stops the process with a
//! message that names the variable and never echoes a secret.

mod database;
pub mod mail;
mod source;

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use database::{DatabaseConfig, DatabaseUrl};
pub use mail::{DkimConfig, MailConfig};
pub use source::{CONFIG_FILE_VAR, Source};

// The names of the variables read here.
const BODY_LIMIT_BYTES: &str = "KEEL_BODY_LIMIT_BYTES";
const DATA_DIR: &str = "KEEL_DATA_DIR";
const HTTP_CLIENT_CONNECT_TIMEOUT_SECS: &str = "KEEL_HTTP_CLIENT_CONNECT_TIMEOUT_SECS";
const HTTP_CLIENT_RETRIES: &str = "KEEL_HTTP_CLIENT_RETRIES";
const HTTP_CLIENT_TIMEOUT_SECS: &str = "KEEL_HTTP_CLIENT_TIMEOUT_SECS";
const JOB_CONCURRENCY: &str = "KEEL_JOB_CONCURRENCY";
const JOB_LEASE_SECS: &str = "KEEL_JOB_LEASE_SECS";
const JOB_POLL_MS: &str = "KEEL_JOB_POLL_MS";
const JOB_RETRY_BASE_MS: &str = "KEEL_JOB_RETRY_BASE_MS";
const JWKS_REFETCH_COOLDOWN_SECS: &str = "KEEL_JWKS_REFETCH_COOLDOWN_SECS";
const LOG_FORMAT: &str = "KEEL_LOG_FORMAT";
const METRICS_ADDR: &str = "KEEL_METRICS_ADDR";
const MIGRATION_LOCK_WAIT_SECS: &str = "KEEL_MIGRATION_LOCK_WAIT_SECS";
const MIGRATION_TABLE_LOCK_TIMEOUT_SECS: &str = "KEEL_MIGRATION_TABLE_LOCK_TIMEOUT_SECS";
const REDIS_PREFIX: &str = "KEEL_REDIS_PREFIX";
const REDIS_URL: &str = "REDIS_URL";
const REQUEST_TIMEOUT_SECS: &str = "KEEL_REQUEST_TIMEOUT_SECS";
const SECRET_KEY: &str = "KEEL_SECRET_KEY";
const SHUTDOWN_DRAIN_SECS: &str = "KEEL_SHUTDOWN_DRAIN_SECS";
const SHUTDOWN_GRACE_SECS: &str = "KEEL_SHUTDOWN_GRACE_SECS";
const SKIP_MIGRATIONS: &str = "SKIP_MIGRATIONS";
const SLOW_REQUEST_MS: &str = "KEEL_SLOW_REQUEST_MS";
const START_HOLD_SECS: &str = "KEEL_START_HOLD_SECS";
const TRUSTED_PROXIES: &str = "KEEL_TRUSTED_PROXIES";

/// A configuration problem, naming the variable.
#[derive(Debug, Clone, thiserror::Error)]
#[error("configuration error: {var}: {reason}")]
pub struct ConfigError {
    pub var: String,
    pub reason: String,
}

impl ConfigError {
    pub fn missing(var: &str) -> Self {
        Self {
            var: var.to_owned(),
            reason: "is required but not set".to_owned(),
        }
    }

    pub fn invalid(var: &str, reason: impl Into<String>) -> Self {
        Self {
            var: var.to_owned(),
            reason: reason.into(),
        }
    }
}

/// A value that must never be printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Self {
        Self(value)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

#[derive(Debug, Clone)]
pub struct MigrationConfig {
    pub skip: bool,
    /// How long a migrator waits for another one holding the lock.
    pub lock_wait: Duration,
    /// PostgreSQL `lock_timeout` for the statements of a migration.
    pub table_lock_timeout: Duration,
}

#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub request_timeout: Duration,
    pub body_limit: usize,
    pub shutdown_grace: Duration,
    /// After SIGTERM, how long `/readyz` says `draining` while requests are
    /// still served, before the listeners stop accepting.
    pub shutdown_drain: Duration,
    /// While the process starts, how long an ordinary request waits for the
    /// service to be ready before it is answered 503.
    pub start_hold: Duration,
    pub trusted_proxies: TrustedProxies,
    /// Requests slower than this are logged with where their time went
    /// (`http::slow`); `None`: nothing is timed.
    pub slow_request: Option<Duration>,
}

#[derive(Debug, Clone)]
pub struct JobsConfig {
    /// Jobs run at once in this process; 0 runs no worker here.
    pub concurrency: usize,
    pub poll_interval: Duration,
    /// How long a claimed job stays claimed before another worker may retry it.
    pub lease: Duration,
    /// First retry delay; doubles with each attempt.
    pub retry_base: Duration,
}

#[derive(Debug, Clone)]
pub struct OutboundConfig {
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub retries: usize,
    pub jwks_refetch_cooldown: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// Configuration shared by every service in the process.
#[derive(Debug, Clone)]
pub struct PlatformConfig {
    pub data_dir: PathBuf,
    pub database: DatabaseConfig,
    pub migrations: MigrationConfig,
    pub http: HttpConfig,
    pub jobs: JobsConfig,
    pub mail: MailConfig,
    pub outbound: OutboundConfig,
    pub redis_url: Option<Secret>,
    pub redis_prefix: String,
    /// Seals secrets at rest; generated under the data directory if unset.
    pub secret_key: Option<Secret>,
    pub metrics_addr: SocketAddr,
    pub log_format: LogFormat,
}

impl PlatformConfig {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let data_dir = PathBuf::from(src.string_or(DATA_DIR, "./data"));
        Ok(Self {
            database: database::from_source(src, &data_dir)?,
            migrations: MigrationConfig {
                skip: src.bool_or(SKIP_MIGRATIONS, false)?,
                lock_wait: src.secs_or(MIGRATION_LOCK_WAIT_SECS, Duration::from_secs(120))?,
                table_lock_timeout: src
                    .secs_or(MIGRATION_TABLE_LOCK_TIMEOUT_SECS, Duration::from_secs(60))?,
            },
            http: HttpConfig {
                request_timeout: src.secs_or(REQUEST_TIMEOUT_SECS, Duration::from_secs(30))?,
                body_limit: src.parse_or(BODY_LIMIT_BYTES, 1024 * 1024)?,
                shutdown_grace: src.secs_or(SHUTDOWN_GRACE_SECS, Duration::from_secs(30))?,
                shutdown_drain: src.secs_or(SHUTDOWN_DRAIN_SECS, Duration::from_secs(5))?,
                start_hold: src.secs_or(START_HOLD_SECS, Duration::from_secs(10))?,
                trusted_proxies: trusted_proxies(src)?,
                slow_request: Some(src.millis_or(SLOW_REQUEST_MS, Duration::ZERO)?)
                    .filter(|d| !d.is_zero()),
            },
            jobs: JobsConfig {
                concurrency: src.parse_or(JOB_CONCURRENCY, 8)?,
                poll_interval: src.millis_or(JOB_POLL_MS, Duration::from_millis(500))?,
                lease: src.secs_or(JOB_LEASE_SECS, Duration::from_secs(300))?,
                retry_base: src.millis_or(JOB_RETRY_BASE_MS, Duration::from_millis(1000))?,
            },
            mail: MailConfig::from_source(src, &data_dir)?,
            outbound: OutboundConfig {
                timeout: src.secs_or(HTTP_CLIENT_TIMEOUT_SECS, Duration::from_secs(10))?,
                connect_timeout: src
                    .secs_or(HTTP_CLIENT_CONNECT_TIMEOUT_SECS, Duration::from_secs(5))?,
                retries: src.parse_or(HTTP_CLIENT_RETRIES, 3)?,
                jwks_refetch_cooldown: src
                    .secs_or(JWKS_REFETCH_COOLDOWN_SECS, Duration::from_secs(30))?,
            },
            redis_url: redis_url(src)?,
            redis_prefix: src.string_or(REDIS_PREFIX, "keel:"),
            secret_key: src.secret(SECRET_KEY),
            metrics_addr: addr(src, METRICS_ADDR, "127.0.0.1:9100")?,
            log_format: log_format(src)?,
            data_dir,
        })
    }

    /// The data directory, created if absent.
    pub fn ensure_data_dir(&self) -> Result<&Path, ConfigError> {
        std::fs::create_dir_all(&self.data_dir).map_err(|e| {
            ConfigError::invalid(
                DATA_DIR,
                format!("cannot create {}: {e}", self.data_dir.display()),
            )
        })?;
        Ok(&self.data_dir)
    }
}

/// `KEEL_ENV`: `production` or `development`.
pub const ENV: &str = "KEEL_ENV";

/// Whether keel runs in production: `KEEL_ENV=production`; when it is not
/// set, a service listening beyond this machine (`listen` not loopback)
/// is. Production refuses what is only safe on a developer's machine (mail
/// written to files, say) unless it is chosen on purpose.
pub fn production(src: &Source, listen: SocketAddr) -> Result<bool, ConfigError> {
    match src
        .get(ENV)
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        None => Ok(!listen.ip().is_loopback()),
        Some("production") => Ok(true),
        Some("development") => Ok(false),
        Some(other) => Err(ConfigError::invalid(
            ENV,
            format!("expected production or development, got {other:?}"),
        )),
    }
}

/// Parses a listen address variable.
pub fn addr(src: &Source, var: &str, default: &str) -> Result<SocketAddr, ConfigError> {
    let raw = src.get(var).unwrap_or(default);
    raw.trim()
        .parse()
        .map_err(|_| ConfigError::invalid(var, format!("expected host:port, got {raw:?}")))
}

fn trusted_proxies(src: &Source) -> Result<TrustedProxies, ConfigError> {
    src.list(TRUSTED_PROXIES)
        .iter()
        .map(|p| {
            p.parse::<ipnet::IpNet>()
                .or_else(|_| p.parse::<IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    ConfigError::invalid(
                        TRUSTED_PROXIES,
                        format!("not an IP address or network (10.0.0.5, 10.0.0.0/8): {p:?}"),
                    )
                })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(TrustedProxies)
}

/// The proxies whose `X-Forwarded-For` is believed: addresses and networks
/// (`10.0.0.5`, `10.0.0.0/8`: a Kubernetes Ingress controller's pods).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<ipnet::IpNet>);

impl TrustedProxies {
    pub fn contains(&self, ip: &IpAddr) -> bool {
        // An IPv4 peer may arrive as an IPv4-mapped IPv6 address.
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(*ip, IpAddr::V4),
            v4 => *v4,
        };
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// These and `more` (addresses).
    #[must_use]
    pub fn and(mut self, more: impl IntoIterator<Item = IpAddr>) -> Self {
        self.0.extend(more.into_iter().map(ipnet::IpNet::from));
        self
    }
}

impl FromIterator<IpAddr> for TrustedProxies {
    fn from_iter<I: IntoIterator<Item = IpAddr>>(iter: I) -> Self {
        Self::default().and(iter)
    }
}

fn redis_url(src: &Source) -> Result<Option<Secret>, ConfigError> {
    match src.secret(REDIS_URL) {
        Some(s) if !(s.expose().starts_with("redis://") || s.expose().starts_with("rediss://")) => {
            Err(ConfigError::invalid(REDIS_URL, "expected a redis:// URL"))
        }
        other => Ok(other),
    }
}

fn log_format(src: &Source) -> Result<LogFormat, ConfigError> {
    match src.get(LOG_FORMAT).map(str::to_ascii_lowercase).as_deref() {
        None | Some("text") => Ok(LogFormat::Text),
        Some("json") => Ok(LogFormat::Json),
        Some(other) => Err(ConfigError::invalid(
            LOG_FORMAT,
            format!("expected text or json, got {other:?}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_need_no_environment() -> Result<(), ConfigError> {
        let cfg = PlatformConfig::from_source(&Source::default())?;
        assert!(
            matches!(cfg.database.url, DatabaseUrl::Sqlite(ref u) if u.ends_with("data/keel.db"))
        );
        assert_eq!(cfg.http.body_limit, 1024 * 1024);
        assert_eq!(cfg.metrics_addr.port(), 9100);
        Ok(())
    }

    #[test]
    fn a_foreign_database_url_is_refused_by_name() {
        let src = Source::from_pairs([("DATABASE_URL", "mysql://x")]);
        let err = PlatformConfig::from_source(&src).err();
        assert_eq!(err.map(|e| e.var), Some("DATABASE_URL".to_owned()));
    }

    #[test]
    fn secrets_do_not_print() {
        assert_eq!(
            format!("{:?}", Secret::new("hunter2".into())),
            "Secret([redacted])"
        );
    }
}
