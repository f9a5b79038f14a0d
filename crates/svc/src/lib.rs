//! svc: the `svc/v1` REST namespace: the host site (settings, admins, App
//! Check), the form API, and the push API. See docs/svc.md.

pub mod auth;
pub mod cli;
pub mod config;
pub mod domain;
pub mod entity;
pub mod error;
pub mod expo;
pub mod input;
pub mod jobs;
mod pages;
mod routes;
mod schema;
pub mod state;

use jsonwebtoken::Algorithm;
use keel_platform::StartError;
use keel_platform::batch::Batcher;
use keel_platform::db::Db;
use keel_platform::http::ServiceApp;
use keel_platform::jwks::{JwksConfig, JwksVerifier};
use keel_platform::service::{Build, Command, HttpService, Listener, builder};
use keel_platform::tasks::Tasks;
use keel_platform::utoipa_axum::router::OpenApiRouter;

pub use config::{Config, NAMESPACE};
pub use schema::MIGRATIONS;

use crate::domain::appcheck::AppCheck;
use crate::domain::settings::SettingsStore;
use crate::domain::{hooks, push, site};
use crate::state::{AppState, Inner};

// The names of the variables read here.
const SVC_ADDR: &str = "KEEL_SVC_ADDR";

pub const NAME: &str = "svc";

/// The svc service, as the process sees it.
pub static SERVICE: HttpService = HttpService {
    name: NAME,
    listener: Listener {
        var: SVC_ADDR,
        default: "127.0.0.1:8085",
    },
    migrations: &MIGRATIONS,
    configure: |src| Ok(builder(Config::from_source(src)?, app)),
    render: error::render,
    doors: routes::DOORS,
};

/// `keel svc ...`.
pub static COMMAND: Command = Command {
    command: cli::command,
    run: |src, matches| Box::pin(cli::run(src, matches)),
};

fn submission_writer(db: Db, tasks: &Tasks) -> Batcher<site::NewSubmission, i64> {
    Batcher::start_with(tasks, "svc submissions", 256, db, |db, items| async move {
        site::store_submissions(&db, items).await
    })
}

/// Builds the service.
fn app(b: &mut Build<'_>, cfg: Config) -> Result<ServiceApp, StartError> {
    let platform = b.platform;
    jobs::register(
        b.jobs,
        &jobs::Delivery::new(
            platform.db.clone(),
            expo::Expo::new(platform.http.clone(), &platform.cache, &cfg.expo),
            cfg.expo.receipt_delay,
            platform.jobs_wake.clone(),
        ),
    );
    jobs::idempotency_purge::register(
        b.jobs,
        b.tasks,
        &platform.db,
        cfg.expo.idempotency_purge_cron.clone(),
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
        audit: hooks::audit_writer(platform.db.clone(), b.tasks),
        submissions: submission_writer(platform.db.clone(), b.tasks),
        forms: site::FormCache::new(platform.db.clone()),
        registrations: push::devices::registration_writer(platform.db.clone(), b.tasks),
        devices: push::devices::device_reads(&platform.db, b.tasks),
        cfg,
    });
    b.console.extend(routes::areas::areas(&state));
    let pages = pages::router(&format!("{}/svc/admin", state.cfg.rest_root));
    Ok(ServiceApp {
        name: NAME,
        routes: OpenApiRouter::new()
            .nest(&base_path, routes::router(state))
            .merge(OpenApiRouter::from(pages)),
        base_path,
        render: error::render,
    })
}
