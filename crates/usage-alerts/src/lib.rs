//! usage-alerts: usage events, thresholds, devices and APNs alerts. See
//! docs/usage-alerts.md.

pub mod apns;
pub mod auth;
pub mod config;
pub mod domain;
pub mod entity;
pub mod error;
pub mod input;
pub mod jobs;
pub mod routes;
mod schema;
pub mod state;

use std::sync::Arc;

use jsonwebtoken::Algorithm;
use keel_platform::StartError;
use keel_platform::http::ServiceApp;
use keel_platform::jwks::{JwksConfig, JwksVerifier};
use keel_platform::service::{Build, HttpService, Listener, builder};

pub use config::Config;
pub use schema::MIGRATIONS;

use crate::apns::ApnsClient;
use crate::auth::Identity;
use crate::config::Environment;
use crate::domain::ingest::Ingestor;
use crate::state::{AppState, Inner};

// The names of the variables read here.
const USAGE_ALERTS_ADDR: &str = "KEEL_USAGE_ALERTS_ADDR";

pub const NAME: &str = "usage-alerts";

/// The usage-alerts service, as the process sees it.
pub static SERVICE: HttpService = HttpService {
    name: NAME,
    listener: Listener {
        var: USAGE_ALERTS_ADDR,
        default: config::DEFAULT_ADDR,
    },
    migrations: &MIGRATIONS,
    configure: |src| Ok(builder(Config::from_source(src)?, app)),
    render: error::render,
    doors: &[],
};

/// Builds the service.
fn app(b: &mut Build<'_>, cfg: Config) -> Result<ServiceApp, StartError> {
    let platform = b.platform;
    let identity = match cfg.environment {
        Environment::Development if cfg.exposed_development => {
            tracing::warn!(
                "usage-alerts runs in development mode on an address other machines can reach: ANY bearer token is accepted as a user (KEEL_USAGE_ALERTS_ENV=development was chosen; set production to verify identity tokens)"
            );
            Identity::Development
        }
        Environment::Development => {
            tracing::warn!(
                "usage-alerts runs in development mode: identity tokens are NOT verified (set KEEL_USAGE_ALERTS_ENV=production)"
            );
            Identity::Development
        }
        Environment::Production => {
            let verifier = JwksVerifier::new(
                platform.http.clone(),
                JwksConfig {
                    url: cfg.apple.jwks_url.clone(),
                    algorithms: vec![Algorithm::RS256],
                    max_age: cfg.apple.jwks_max_age,
                    refetch_cooldown: platform.config.outbound.jwks_refetch_cooldown,
                },
            );
            Identity::production(verifier, &cfg.apple)
        }
    };
    let apns = ApnsClient::from_config(&cfg.apns, &platform.config.outbound)?.map(Arc::new);
    if apns.is_none() {
        tracing::warn!(
            "APNs credentials are not configured: alerts will be recorded as not delivered"
        );
    }
    jobs::deliver_alert::register(b.jobs, platform.db.clone(), apns);
    let state = AppState::new(Inner {
        db: platform.db.clone(),
        environment: cfg.environment,
        identity,
        ingestor: Ingestor::start(platform.db.clone(), b.tasks),
    });
    Ok(ServiceApp {
        name: NAME,
        base_path: String::new(),
        routes: routes::router(state),
        render: error::render,
    })
}
