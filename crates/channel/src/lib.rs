//! channel: the live channel web app (channel-web) and its API (channel-api)
//! (seed 001, second half).

pub mod trpc;
pub mod web;

use keel_platform::Platform;
use keel_platform::config::{ConfigError, Source};
use keel_platform::http::ServiceApp;
use keel_platform::jobs::JobRegistry;
use keel_platform::migrate::MigrationSet;
use keel_platform::utoipa_axum::router::OpenApiRouter;

pub const WEB: &str = "channel-web";
pub const API: &str = "channel-api";

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "channel",
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

/// Builds channel-web.
pub fn web_app(
    _platform: &Platform,
    _cfg: Config,
    _jobs: &mut JobRegistry,
) -> Result<ServiceApp, keel_platform::StartError> {
    Ok(ServiceApp {
        name: WEB,
        base_path: String::new(),
        routes: OpenApiRouter::new(),
        render: web::render,
    })
}

/// Builds channel-api.
pub fn api_app(
    _platform: &Platform,
    _cfg: Config,
    _jobs: &mut JobRegistry,
) -> Result<ServiceApp, keel_platform::StartError> {
    Ok(ServiceApp {
        name: API,
        base_path: String::new(),
        routes: OpenApiRouter::new(),
        render: trpc::render,
    })
}
