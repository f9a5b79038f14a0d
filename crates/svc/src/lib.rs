//! svc: the `svc/v1` REST namespace: the host site (settings, admins, App
//! Check), the form API, and the push API (seed 002). See docs/svc.md.

pub mod admin;
pub mod appcheck;
pub mod auth;
pub mod config;
pub mod cors;
pub mod csv_export;
pub mod entity;
pub mod error;
pub mod forms;
pub mod hooks;
pub mod push;
pub(crate) mod routes;
mod schema;
pub mod settings;
pub mod site;
pub mod state;

use jsonwebtoken::Algorithm;
use keel_platform::http::ServiceApp;
use keel_platform::jobs::JobRegistry;
use keel_platform::jwks::{JwksConfig, JwksVerifier};
use keel_platform::utoipa_axum::router::OpenApiRouter;
use keel_platform::{Platform, StartError};

pub use config::{Config, NAMESPACE};
pub use schema::MIGRATIONS;

use crate::appcheck::AppCheck;
use crate::settings::SettingsStore;
use crate::state::{AppState, Inner};

pub const NAME: &str = "svc";

fn submission_writer(
    db: keel_platform::db::Db,
) -> keel_platform::batch::Batcher<site::NewSubmission, i64> {
    keel_platform::batch::Batcher::start(256, move |items: Vec<site::NewSubmission>| {
        let db = db.clone();
        async move {
            site::store_submissions(&db, items)
                .await
                .map_err(|e| e.to_string())
        }
    })
}

/// Builds the service.
pub fn app(
    platform: &Platform,
    cfg: Config,
    jobs: &mut JobRegistry,
) -> Result<ServiceApp, StartError> {
    push::deliver::register(
        jobs,
        push::deliver::Delivery::new(
            platform.db.clone(),
            push::expo::Expo::new(platform.http.clone(), &cfg.expo),
            cfg.expo.receipt_delay,
        ),
    );
    let verifier = JwksVerifier::new(
        platform.http.clone(),
        JwksConfig {
            url: cfg.appcheck_jwks_url.clone(),
            algorithms: vec![Algorithm::RS256],
            max_age: cfg.appcheck_jwks_max_age,
            refetch_cooldown: platform.config.outbound.jwks_refetch_cooldown,
        },
    );
    let base_path = cfg.base_path();
    let state = AppState::new(Inner {
        platform: platform.clone(),
        db: platform.db.clone(),
        settings: SettingsStore::new(platform.db.clone()),
        appcheck: AppCheck::new(verifier),
        dummy_hash: keel_platform::password::dummy_hash()
            .map_err(|e| StartError::Other(e.to_string()))?,
        audit: hooks::audit_writer(platform.db.clone()),
        submissions: submission_writer(platform.db.clone()),
        forms: site::FormCache::new(platform.db.clone()),
        registrations: push::devices::registration_writer(platform.db.clone()),
        cfg,
    });
    Ok(ServiceApp {
        name: NAME,
        routes: OpenApiRouter::new().nest(&base_path, routes::router(state)),
        base_path,
        render: error::render,
    })
}
