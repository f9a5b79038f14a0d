//! usage-alerts: usage events, thresholds, devices and APNs alerts (seed 001, first half).

pub mod error;

use keel_platform::Platform;
use keel_platform::config::{ConfigError, Source};
use keel_platform::http::ServiceApp;
use keel_platform::jobs::JobRegistry;
use keel_platform::migrate::MigrationSet;
use keel_platform::utoipa_axum::router::OpenApiRouter;

pub const NAME: &str = "usage-alerts";

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "usage_alerts",
    migrations: &[],
};

/// The service's own configuration.
#[derive(Debug, Clone)]
pub struct Config {}

impl Config {
    pub fn from_source(_src: &Source) -> Result<Self, ConfigError> {
        Ok(Self {})
    }
}

/// Builds the service.
pub fn app(
    _platform: &Platform,
    _cfg: Config,
    _jobs: &mut JobRegistry,
) -> Result<ServiceApp, keel_platform::StartError> {
    Ok(ServiceApp {
        name: NAME,
        base_path: String::new(),
        routes: OpenApiRouter::new(),
        render: error::render,
    })
}
