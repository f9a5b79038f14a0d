//! svc: the `svc/v1` REST namespace: form submission and push APIs (seed 002).

pub mod error;

use keel_platform::Platform;
use keel_platform::config::{ConfigError, Source};
use keel_platform::http::ServiceApp;
use keel_platform::jobs::JobRegistry;
use keel_platform::migrate::MigrationSet;
use keel_platform::utoipa_axum::router::OpenApiRouter;

pub const NAME: &str = "svc";
pub const NAMESPACE: &str = "/svc/v1";

pub static MIGRATIONS: MigrationSet = MigrationSet {
    component: "svc",
    migrations: &[],
};

/// The service's own configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The host site's REST root, prepended to `/svc/v1` (default empty).
    pub rest_root: String,
}

impl Config {
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let root = src.string_or("KEEL_SVC_REST_ROOT", "");
        let root = root.trim_end_matches('/');
        if !root.is_empty() && !root.starts_with('/') {
            return Err(ConfigError::invalid(
                "KEEL_SVC_REST_ROOT",
                "must start with / (e.g. /wp-json)",
            ));
        }
        Ok(Self {
            rest_root: root.to_owned(),
        })
    }

    pub fn base_path(&self) -> String {
        format!("{}{NAMESPACE}", self.rest_root)
    }
}

/// Builds the service.
pub fn app(
    _platform: &Platform,
    cfg: Config,
    _jobs: &mut JobRegistry,
) -> Result<ServiceApp, keel_platform::StartError> {
    Ok(ServiceApp {
        name: NAME,
        base_path: cfg.base_path(),
        routes: OpenApiRouter::new(),
        render: error::render,
    })
}
