//! usage-alerts: usage events, thresholds, devices and APNs alerts (seed
//! 001, first half). See docs/usage-alerts.md.

pub mod apns;
pub mod auth;
pub mod config;
pub mod entity;
pub mod error;
pub mod ingest;
pub mod input;
pub mod push;
mod routes;
mod schema;
pub mod state;
pub mod thresholds;

use std::sync::Arc;

use jsonwebtoken::Algorithm;
use keel_platform::http::ServiceApp;
use keel_platform::jobs::JobRegistry;
use keel_platform::jwks::{JwksConfig, JwksVerifier};
use keel_platform::{Platform, StartError};

pub use config::Config;
pub use schema::MIGRATIONS;

use crate::apns::ApnsClient;
use crate::auth::Identity;
use crate::config::Environment;
use crate::ingest::Ingestor;
use crate::state::{AppState, Inner};

pub const NAME: &str = "usage-alerts";

/// Builds the service.
pub fn app(
    platform: &Platform,
    cfg: Config,
    jobs: &mut JobRegistry,
) -> Result<ServiceApp, StartError> {
    let identity = match cfg.environment {
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
    push::register(jobs, platform.db.clone(), apns);
    let state = AppState::new(Inner {
        db: platform.db.clone(),
        environment: cfg.environment,
        identity,
        ingestor: Ingestor::start(platform.db.clone()),
    });
    Ok(ServiceApp {
        name: NAME,
        base_path: String::new(),
        routes: routes::router(state),
        render: error::render,
    })
}
