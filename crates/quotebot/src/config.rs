//! quotebot's configuration: the environment only (the production
//! container reads no file). A missing or invalid value stops the process
//! at once with a message naming the variable; the token is never printed.
//! `CHAT_APPLICATION_ID`, `CHAT_APPLICATION_PUBLIC_KEY` and
//! `MAIN_GUILD_ID` are not read (they are retired).

use std::net::IpAddr;
use std::time::Duration;

use keel_platform::config::{
    ConfigError, DatabaseConfig, MigrationConfig, PlatformConfig, Secret, Source,
};
use url::Url;

// The names of the variables read here.
const CHAT_APPLICATION_BOT_TOKEN: &str = "CHAT_APPLICATION_BOT_TOKEN";
const DATABASE_URL: &str = "DATABASE_URL";
const DISCORD_API_URL: &str = "KEEL_DISCORD_API_URL";
const MAIN_CHANNEL_ID: &str = "MAIN_CHANNEL_ID";
const OWNER_ID: &str = "OWNER_ID";
const QUOTEBOT_DEATH_LIMIT: &str = "KEEL_QUOTEBOT_DEATH_LIMIT";
const QUOTEBOT_DEATH_WINDOW_MS: &str = "KEEL_QUOTEBOT_DEATH_WINDOW_MS";
const QUOTEBOT_FATAL_WAIT_MS: &str = "KEEL_QUOTEBOT_FATAL_WAIT_MS";
const QUOTEBOT_KILL_TIMEOUT_MS: &str = "KEEL_QUOTEBOT_KILL_TIMEOUT_MS";
const QUOTEBOT_LOOKUP_ATTEMPTS: &str = "KEEL_QUOTEBOT_LOOKUP_ATTEMPTS";
const QUOTEBOT_LOOKUP_BACKOFF_MS: &str = "KEEL_QUOTEBOT_LOOKUP_BACKOFF_MS";
const QUOTEBOT_LOOKUP_MAX_WAIT_MS: &str = "KEEL_QUOTEBOT_LOOKUP_MAX_WAIT_MS";
const QUOTEBOT_PARENT_WATCHDOG_MS: &str = "KEEL_QUOTEBOT_PARENT_WATCHDOG_MS";
const QUOTEBOT_PRESENCE_EVERY_MS: &str = "KEEL_QUOTEBOT_PRESENCE_EVERY_MS";
const QUOTEBOT_READY_TIMEOUT_MS: &str = "KEEL_QUOTEBOT_READY_TIMEOUT_MS";
const QUOTEBOT_SCHEDULE_EVERY_MS: &str = "KEEL_QUOTEBOT_SCHEDULE_EVERY_MS";
const QUOTEBOT_SHARD_WATCHDOG_MS: &str = "KEEL_QUOTEBOT_SHARD_WATCHDOG_MS";
const QUOTEBOT_SPAWN_DELAY_MS: &str = "KEEL_QUOTEBOT_SPAWN_DELAY_MS";
const REDIS_URL: &str = "REDIS_URL";

/// What every command needs: PostgreSQL and the migration settings.
#[derive(Debug, Clone)]
pub struct DbConfig {
    pub database: DatabaseConfig,
    pub migrations: MigrationConfig,
}

impl DbConfig {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let url = src.required(DATABASE_URL)?;
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(ConfigError::invalid(
                DATABASE_URL,
                "quotebot runs on PostgreSQL only: expected a postgres:// URL",
            ));
        }
        let platform = PlatformConfig::from_source(src)?;
        Ok(Self {
            database: platform.database,
            migrations: platform.migrations,
        })
    }
}

/// A Discord snowflake (a user, channel or guild id).
pub fn snowflake(src: &Source, name: &str) -> Result<u64, ConfigError> {
    let raw = src.required(name)?;
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            ConfigError::invalid(
                name,
                format!("expected a Discord id, digits only (got {raw:?})"),
            )
        })
}

/// The bot's timings: the documented constants, each settable (for tests).
#[derive(Debug, Clone)]
pub struct Timing {
    /// Between two shard spawns (discord.js: 5.5 s).
    pub spawn_delay: Duration,
    /// A shard not ready this long after its spawn failed to spawn.
    pub ready_timeout: Duration,
    /// Wait before exiting after a fatal shard error or a failed spawn or
    /// shard-count lookup (default 15 s).
    pub fatal_wait: Duration,
    /// A stopping shard closes within this or exits anyway (default 20 s).
    pub shard_watchdog: Duration,
    /// The manager kills shards still alive this long after SIGTERM (22 s).
    pub kill_timeout: Duration,
    /// The manager exits this long after SIGTERM whatever happens (30 s).
    pub parent_watchdog: Duration,
    /// Deaths within `death_window` that stop respawning (5 in 15 min).
    pub death_limit: usize,
    pub death_window: Duration,
    /// Shard-count lookup: attempts, and the first backoff (doubling).
    pub lookup_attempts: u32,
    pub lookup_backoff: Duration,
    /// The longest a 429's `retry_after` is waited for (60 s).
    pub lookup_max_wait: Duration,
    /// How often a shard looks for quotes due.
    pub schedule_every: Duration,
    /// How often the presence changes.
    pub presence_every: Duration,
}

impl Timing {
    fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let ms = |name: &str, default: u64| src.millis_or(name, Duration::from_millis(default));
        Ok(Self {
            spawn_delay: ms(QUOTEBOT_SPAWN_DELAY_MS, 5_500)?,
            ready_timeout: ms(QUOTEBOT_READY_TIMEOUT_MS, 30_000)?,
            fatal_wait: ms(QUOTEBOT_FATAL_WAIT_MS, 15_000)?,
            shard_watchdog: ms(QUOTEBOT_SHARD_WATCHDOG_MS, 20_000)?,
            kill_timeout: ms(QUOTEBOT_KILL_TIMEOUT_MS, 22_000)?,
            parent_watchdog: ms(QUOTEBOT_PARENT_WATCHDOG_MS, 30_000)?,
            death_limit: src.parse_or(QUOTEBOT_DEATH_LIMIT, 5)?,
            death_window: ms(QUOTEBOT_DEATH_WINDOW_MS, 15 * 60 * 1000)?,
            lookup_attempts: src.parse_or(QUOTEBOT_LOOKUP_ATTEMPTS, 5)?,
            lookup_backoff: ms(QUOTEBOT_LOOKUP_BACKOFF_MS, 1_000)?,
            lookup_max_wait: ms(QUOTEBOT_LOOKUP_MAX_WAIT_MS, 60_000)?,
            schedule_every: ms(QUOTEBOT_SCHEDULE_EVERY_MS, 30_000)?,
            presence_every: ms(QUOTEBOT_PRESENCE_EVERY_MS, 300_000)?,
        })
    }
}

/// Everything `keel quotebot` (the manager and its shards) needs.
#[derive(Debug, Clone)]
pub struct Config {
    pub db: DbConfig,
    pub redis_url: Secret,
    pub token: Secret,
    pub owner_id: u64,
    pub main_channel_id: u64,
    pub port: u16,
    /// Unset: every interface, IPv4 and IPv6.
    pub host: Option<IpAddr>,
    /// Discord's REST base (`KEEL_DISCORD_API_URL`, default
    /// `https://discord.com`); the gateway URL comes from its answer.
    pub discord_api: Url,
    pub timing: Timing,
}

impl Config {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let db = DbConfig::from_source(src)?;
        let redis = src.required(REDIS_URL)?;
        if !(redis.starts_with("redis://") || redis.starts_with("rediss://")) {
            return Err(ConfigError::invalid(
                REDIS_URL,
                "expected a redis:// or rediss:// URL",
            ));
        }
        let token = src
            .secret(CHAT_APPLICATION_BOT_TOKEN)
            .ok_or_else(|| ConfigError::missing(CHAT_APPLICATION_BOT_TOKEN))?;
        if token.expose().trim().contains(char::is_whitespace) {
            return Err(ConfigError::invalid(
                CHAT_APPLICATION_BOT_TOKEN,
                "must not contain spaces",
            ));
        }
        let raw_api = src.string_or(DISCORD_API_URL, "https://discord.com");
        let discord_api = Url::parse(&raw_api)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
            .ok_or_else(|| {
                ConfigError::invalid(
                    DISCORD_API_URL,
                    format!("expected an http(s) URL (got {raw_api:?})"),
                )
            })?;
        Ok(Self {
            db,
            redis_url: Secret::new(redis),
            token,
            owner_id: snowflake(src, OWNER_ID)?,
            main_channel_id: snowflake(src, MAIN_CHANNEL_ID)?,
            port: src.parse_or("PORT", 3000)?,
            host: src.parse("HOST")?,
            discord_api,
            timing: Timing::from_source(src)?,
        })
    }
}
