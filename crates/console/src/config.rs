//! The console's configuration (see docs/operations.md, "Operator console").

use std::time::Duration;

use keel_platform::config::{ConfigError, Source};

use crate::domain::sessions::Lifetimes;

// The names of the variables read here.
pub const ADDR: &str = "KEEL_CONSOLE_ADDR";
const IDLE_SECS: &str = "KEEL_CONSOLE_IDLE_SECS";
const SESSION_MAX_SECS: &str = "KEEL_CONSOLE_SESSION_MAX_SECS";
const QUOTEBOT_URL: &str = "KEEL_CONSOLE_QUOTEBOT_URL";

/// Where the console listens unless `KEEL_CONSOLE_ADDR` says: this machine
/// only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8086";

#[derive(Debug, Clone)]
pub struct Config {
    pub sessions: Lifetimes,
    /// quotebot's health listener (`http://quotebot:3000`), whose gateway
    /// report the health page shows; none: not shown.
    pub quotebot_url: Option<String>,
}

impl Config {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let idle = src.secs_or(IDLE_SECS, Duration::from_secs(30 * 60))?;
        let longest = src.secs_or(SESSION_MAX_SECS, Duration::from_secs(12 * 3600))?;
        let chrono = |name: &str, d: Duration| {
            chrono::Duration::from_std(d)
                .ok()
                .filter(|d| *d > chrono::Duration::zero())
                .ok_or_else(|| ConfigError::invalid(name, "a number of seconds above 0"))
        };
        let quotebot_url = match src.get(QUOTEBOT_URL).map(str::trim) {
            None | Some("") => None,
            Some(url) => {
                let parsed = axum::http::Uri::try_from(url).ok();
                let web = parsed.is_some_and(|u| {
                    matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some()
                });
                if !web {
                    return Err(ConfigError::invalid(
                        QUOTEBOT_URL,
                        "an http:// or https:// URL of quotebot's health listener",
                    ));
                }
                Some(url.to_owned())
            }
        };
        Ok(Self {
            sessions: Lifetimes {
                idle: chrono(IDLE_SECS, idle)?,
                longest: chrono(SESSION_MAX_SECS, longest)?,
            },
            quotebot_url,
        })
    }
}
