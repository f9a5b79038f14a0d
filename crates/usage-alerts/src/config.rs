//! usage-alerts configuration (see docs/usage-alerts.md).

use std::path::PathBuf;
use std::time::Duration;

use keel_platform::config::{ConfigError, Source, addr};

// The names of the variables read here.
const APNS_CA_CERT: &str = "KEEL_APNS_CA_CERT";
const APNS_KEY_ID: &str = "KEEL_APNS_KEY_ID";
const APNS_KEY_PATH: &str = "KEEL_APNS_KEY_PATH";
const APNS_SANDBOX_URL: &str = "KEEL_APNS_SANDBOX_URL";
const APNS_TEAM_ID: &str = "KEEL_APNS_TEAM_ID";
const APNS_TOKEN_TTL_SECS: &str = "KEEL_APNS_TOKEN_TTL_SECS";
const APNS_TOPIC: &str = "KEEL_APNS_TOPIC";
const APNS_URL: &str = "KEEL_APNS_URL";
const APNS_WATCHOS_TOPIC: &str = "KEEL_APNS_WATCHOS_TOPIC";
const APPLE_AUDIENCES: &str = "KEEL_APPLE_AUDIENCES";
const APPLE_ISSUER: &str = "KEEL_APPLE_ISSUER";
const APPLE_JWKS_MAX_AGE_SECS: &str = "KEEL_APPLE_JWKS_MAX_AGE_SECS";
const APPLE_JWKS_URL: &str = "KEEL_APPLE_JWKS_URL";
const USAGE_ALERTS_ADDR: &str = "KEEL_USAGE_ALERTS_ADDR";
const USAGE_ALERTS_ENV: &str = "KEEL_USAGE_ALERTS_ENV";

/// Where usage-alerts listens unless `KEEL_USAGE_ALERTS_ADDR` says.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8082";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Environment {
    Development,
    Production,
}

impl Environment {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Development => "development",
            Self::Production => "production",
        }
    }
}

/// Sign in with Apple token verification (production).
#[derive(Debug, Clone)]
pub struct AppleConfig {
    pub jwks_url: String,
    pub audiences: Vec<String>,
    pub issuer: String,
    pub jwks_max_age: Duration,
}

/// APNs token-based authentication and endpoints.
#[derive(Debug, Clone)]
pub struct ApnsConfig {
    /// `None`: alerts are recorded as not delivered.
    pub credentials: Option<ApnsCredentials>,
    pub production_url: String,
    pub sandbox_url: String,
    /// Extra trust root (PEM) for the APNs hosts; when set, only it is trusted.
    pub ca_cert: Option<PathBuf>,
    pub token_ttl: Duration,
}

#[derive(Debug, Clone)]
pub struct ApnsCredentials {
    pub key_path: PathBuf,
    pub key_id: String,
    pub team_id: String,
    pub topic: String,
    pub watchos_topic: String,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub environment: Environment,
    /// Development mode, chosen explicitly, on an address reachable from
    /// other machines (allowed, and said loudly at start).
    pub exposed_development: bool,
    pub apple: AppleConfig,
    pub apns: ApnsConfig,
}

impl Config {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let chosen = src.get(USAGE_ALERTS_ENV);
        let environment = match chosen.map(str::to_ascii_lowercase).as_deref() {
            None | Some("development") => Environment::Development,
            Some("production") => Environment::Production,
            Some(other) => {
                return Err(ConfigError::invalid(
                    USAGE_ALERTS_ENV,
                    format!("expected development or production, got {other:?}"),
                ));
            }
        };
        let listen = addr(src, USAGE_ALERTS_ADDR, DEFAULT_ADDR)?;
        let exposed = !listen.ip().is_loopback();
        if environment == Environment::Development && exposed && chosen.is_none() {
            // Development mode takes any token as a user: never by default
            // where other machines can reach it.
            return Err(ConfigError::invalid(
                USAGE_ALERTS_ENV,
                format!(
                    "is not set, and usage-alerts listens on {listen}, beyond this machine: set it to production (with KEEL_APPLE_AUDIENCES) so identity tokens are verified, or to development to accept any token as a user on purpose"
                ),
            ));
        }
        let audiences = src.list(APPLE_AUDIENCES);
        if environment == Environment::Production && audiences.is_empty() {
            return Err(ConfigError::invalid(
                APPLE_AUDIENCES,
                "is required in production: the app's bundle identifier(s), comma-separated",
            ));
        }
        Ok(Self {
            environment,
            exposed_development: environment == Environment::Development && exposed,
            apple: AppleConfig {
                jwks_url: src.string_or(APPLE_JWKS_URL, "https://appleid.apple.com/auth/keys"),
                audiences,
                issuer: src.string_or(APPLE_ISSUER, "https://appleid.apple.com"),
                jwks_max_age: src.secs_or(APPLE_JWKS_MAX_AGE_SECS, Duration::from_secs(3600))?,
            },
            apns: apns(src)?,
        })
    }
}

fn apns(src: &Source) -> Result<ApnsConfig, ConfigError> {
    let vars = [APNS_KEY_PATH, APNS_KEY_ID, APNS_TEAM_ID, APNS_TOPIC];
    let set: Vec<&str> = vars
        .iter()
        .copied()
        .filter(|v| src.get(v).is_some())
        .collect();
    let credentials = if set.is_empty() {
        None
    } else {
        if let Some(missing) = vars.iter().find(|v| src.get(v).is_none()) {
            return Err(ConfigError::invalid(
                missing,
                "is required when any APNs credential is set (KEEL_APNS_KEY_PATH, KEEL_APNS_KEY_ID, KEEL_APNS_TEAM_ID, KEEL_APNS_TOPIC)",
            ));
        }
        let topic = src.required(APNS_TOPIC)?;
        Some(ApnsCredentials {
            key_path: PathBuf::from(src.required(APNS_KEY_PATH)?),
            key_id: src.required(APNS_KEY_ID)?,
            team_id: src.required(APNS_TEAM_ID)?,
            watchos_topic: src.string_or(APNS_WATCHOS_TOPIC, &format!("{topic}.watchkitapp")),
            topic,
        })
    };
    let token_ttl = src.secs_or(APNS_TOKEN_TTL_SECS, Duration::from_secs(50 * 60))?;
    if !(Duration::from_secs(20 * 60)..=Duration::from_secs(60 * 60)).contains(&token_ttl) {
        return Err(ConfigError::invalid(
            APNS_TOKEN_TTL_SECS,
            "APNs wants a provider token reused for 20 to 60 minutes",
        ));
    }
    Ok(ApnsConfig {
        credentials,
        production_url: src.string_or(APNS_URL, "https://api.push.apple.com"),
        sandbox_url: src.string_or(APNS_SANDBOX_URL, "https://api.sandbox.push.apple.com"),
        ca_cert: src.get(APNS_CA_CERT).map(PathBuf::from),
        token_ttl,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<Config, String> {
        Config::from_source(&Source::from_pairs(pairs.iter().copied())).map_err(|e| e.to_string())
    }

    #[test]
    fn development_is_the_default_only_on_loopback() {
        let local = config(&[]).map(|c| (c.environment, c.exposed_development));
        assert_eq!(local, Ok((Environment::Development, false)));
        let err = config(&[("KEEL_USAGE_ALERTS_ADDR", "0.0.0.0:8082")]).unwrap_err();
        assert!(
            err.contains("KEEL_USAGE_ALERTS_ENV") && err.contains("0.0.0.0:8082"),
            "{err}"
        );
        let chosen = config(&[
            ("KEEL_USAGE_ALERTS_ADDR", "0.0.0.0:8082"),
            ("KEEL_USAGE_ALERTS_ENV", "development"),
        ])
        .map(|c| (c.environment, c.exposed_development));
        assert_eq!(
            chosen,
            Ok((Environment::Development, true)),
            "chosen on purpose"
        );
        let prod = config(&[
            ("KEEL_USAGE_ALERTS_ADDR", "0.0.0.0:8082"),
            ("KEEL_USAGE_ALERTS_ENV", "production"),
            ("KEEL_APPLE_AUDIENCES", "com.example.app"),
        ]);
        assert!(prod.is_ok_and(|c| c.environment == Environment::Production));
        let err = config(&[("KEEL_USAGE_ALERTS_ENV", "production")]).unwrap_err();
        assert!(err.contains("KEEL_APPLE_AUDIENCES"), "{err}");
    }
}
