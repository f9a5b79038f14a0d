//! The console's configuration (see docs/operations.md, "Operator console").

use std::time::Duration;

use keel_platform::config::{ConfigError, Source};

use crate::domain::sessions::Lifetimes;

// The names of the variables read here.
pub const ADDR: &str = "KEEL_CONSOLE_ADDR";
const IDLE_SECS: &str = "KEEL_CONSOLE_IDLE_SECS";
const SESSION_MAX_SECS: &str = "KEEL_CONSOLE_SESSION_MAX_SECS";

/// Where the console listens unless `KEEL_CONSOLE_ADDR` says: this machine
/// only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8086";

#[derive(Debug, Clone)]
pub struct Config {
    pub sessions: Lifetimes,
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
        Ok(Self {
            sessions: Lifetimes {
                idle: chrono(IDLE_SECS, idle)?,
                longest: chrono(SESSION_MAX_SECS, longest)?,
            },
        })
    }
}
