//! The route table of the process: which services exist, where they listen
//! by default, which migrations they need and how each is built.

use keel_platform::Platform;
use keel_platform::StartError;
use keel_platform::config::{ConfigError, Source};
use keel_platform::http::ServiceApp;
use keel_platform::jobs::JobRegistry;
use keel_platform::migrate::MigrationSet;

/// An HTTP service `keel serve` can start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum ServiceName {
    /// Account self-service and goals (seed 000).
    Accounts,
    /// Usage events, thresholds, devices and APNs alerts (seed 001).
    UsageAlerts,
    /// The svc/v1 REST namespace: forms and push (seed 002).
    Svc,
    /// The live channel web app (seed 001).
    ChannelWeb,
    /// The live channel tRPC API, webhooks and cron jobs (seed 001).
    ChannelApi,
}

impl ServiceName {
    pub const ALL: [Self; 5] = [
        Self::Accounts,
        Self::UsageAlerts,
        Self::Svc,
        Self::ChannelWeb,
        Self::ChannelApi,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accounts => keel_accounts::NAME,
            Self::UsageAlerts => keel_usage_alerts::NAME,
            Self::Svc => keel_svc::NAME,
            Self::ChannelWeb => keel_channel::WEB,
            Self::ChannelApi => keel_channel::API,
        }
    }

    /// The variable holding the listen address.
    pub fn addr_var(self) -> &'static str {
        match self {
            Self::Accounts => "KEEL_ACCOUNTS_ADDR",
            Self::UsageAlerts => "KEEL_USAGE_ALERTS_ADDR",
            Self::Svc => "KEEL_SVC_ADDR",
            Self::ChannelWeb => "KEEL_CHANNEL_WEB_ADDR",
            Self::ChannelApi => "KEEL_CHANNEL_API_ADDR",
        }
    }

    pub fn default_addr(self) -> &'static str {
        match self {
            Self::Accounts => "127.0.0.1:8081",
            Self::UsageAlerts => "127.0.0.1:8082",
            Self::ChannelWeb => "127.0.0.1:8083",
            Self::ChannelApi => "127.0.0.1:8084",
            Self::Svc => "127.0.0.1:8085",
        }
    }

    pub fn migrations(self) -> &'static MigrationSet {
        match self {
            Self::Accounts => &keel_accounts::MIGRATIONS,
            Self::UsageAlerts => &keel_usage_alerts::MIGRATIONS,
            Self::Svc => &keel_svc::MIGRATIONS,
            Self::ChannelWeb | Self::ChannelApi => &keel_channel::MIGRATIONS,
        }
    }

    /// The named services, or all of them when none are named; each once.
    pub fn selection(named: &[Self]) -> Vec<Self> {
        let mut v = if named.is_empty() {
            Self::ALL.to_vec()
        } else {
            named.to_vec()
        };
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The migration sets the services need, each once, in order.
    pub fn migration_sets(services: &[Self]) -> Vec<&'static MigrationSet> {
        let mut sets: Vec<&'static MigrationSet> = Vec::new();
        for s in services {
            let set = s.migrations();
            if !sets.iter().any(|have| have.component == set.component) {
                sets.push(set);
            }
        }
        sets
    }
}

impl std::fmt::Display for ServiceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A service's configuration, read before anything is opened.
pub enum ServiceConfig {
    Accounts(keel_accounts::Config),
    UsageAlerts(keel_usage_alerts::Config),
    Svc(keel_svc::Config),
    ChannelWeb(keel_channel::Config),
    ChannelApi(keel_channel::Config),
}

impl ServiceConfig {
    pub fn load(name: ServiceName, src: &Source) -> Result<Self, ConfigError> {
        Ok(match name {
            ServiceName::Accounts => Self::Accounts(keel_accounts::Config::from_source(src)?),
            ServiceName::UsageAlerts => {
                Self::UsageAlerts(keel_usage_alerts::Config::from_source(src)?)
            }
            ServiceName::Svc => Self::Svc(keel_svc::Config::from_source(src)?),
            ServiceName::ChannelWeb => Self::ChannelWeb(keel_channel::Config::from_source(src)?),
            ServiceName::ChannelApi => Self::ChannelApi(keel_channel::Config::from_source(src)?),
        })
    }

    pub fn build(
        self,
        platform: &Platform,
        jobs: &mut JobRegistry,
    ) -> Result<ServiceApp, StartError> {
        match self {
            Self::Accounts(c) => keel_accounts::app(platform, c, jobs),
            Self::UsageAlerts(c) => keel_usage_alerts::app(platform, c, jobs),
            Self::Svc(c) => keel_svc::app(platform, c, jobs),
            Self::ChannelWeb(c) => keel_channel::web_app(platform, c, jobs),
            Self::ChannelApi(c) => keel_channel::api_app(platform, c, jobs),
        }
    }
}
