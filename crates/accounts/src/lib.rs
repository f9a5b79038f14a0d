//! accounts: account self-service and goals, with the login flow
//! that issues its tokens. See docs/accounts.md.

pub mod auth;
mod cli;
pub mod config;
mod console;
pub mod domain;
pub mod entity;
pub mod error;
pub mod id;
pub mod identity;
pub mod input;
pub mod jobs;
mod routes;
mod schema;
pub mod state;
pub mod views;

use keel_platform::StartError;
use keel_platform::http::ServiceApp;
use keel_platform::service::{Build, Command, HttpService, Listener, builder};
use keel_platform::utoipa_axum::router::OpenApiRouter;

pub use config::Config;
pub use schema::MIGRATIONS;

use crate::identity::cache::SessionCache;
use crate::identity::geo::GeoDb;
use crate::identity::tokens::TokenKeys;
use crate::state::{AppState, Inner};

pub const NAME: &str = "accounts";

/// The accounts service, as the process sees it.
pub static SERVICE: HttpService = HttpService {
    name: NAME,
    listener: Listener {
        var: config::ADDR,
        default: config::DEFAULT_ADDR,
    },
    migrations: &MIGRATIONS,
    configure: |src| Ok(builder(Config::from_source(src)?, app)),
    render: error::render,
    doors: routes::DOORS,
};

/// `keel accounts ...`.
pub static COMMAND: Command = Command {
    command: cli::command,
    run: |src, matches| Box::pin(cli::run(src, matches)),
};

/// Builds the service.
fn app(b: &mut Build<'_>, cfg: Config) -> Result<ServiceApp, StartError> {
    let platform = b.platform;
    let tokens = TokenKeys::load(&cfg, &platform.config.data_dir)?;
    let geo = match &cfg.geoip_csv {
        Some(path) => GeoDb::load(path)?,
        None => GeoDb::empty(),
    };
    let webauthn = match &cfg.passkeys {
        Some(p) => Some(identity::webauthn::RelyingParty::new(p)?),
        None => None,
    };
    let base_path = cfg.path_prefix.clone();
    // SQLite: one node, a short cache. PostgreSQL: several nodes, so only
    // with Redis to share revocations (then a changed user is re-read at
    // once; the time bounds changes made straight in the database).
    let cache_ttl = cfg.session_cache.unwrap_or(
        match (platform.db.is_postgres(), platform.cache.is_redis()) {
            (false, _) => std::time::Duration::from_secs(2),
            (true, true) => std::time::Duration::from_secs(30),
            (true, false) => std::time::Duration::ZERO,
        },
    );
    jobs::weekly_mail::register(b.jobs, b.tasks, &platform.db, &platform.secrets, &cfg);
    let state = AppState::new(Inner {
        platform: platform.clone(),
        secrets: platform.secrets.clone(),
        cfg,
        tokens,
        geo,
        sessions: SessionCache::new(cache_ttl, Some(platform.cache.clone())),
        weekly_goals: crate::domain::goal_writer::start(platform.db.clone(), b.tasks),
        webauthn,
    });
    b.console.push(console::area(state.clone()));
    let well_known = routes::well_known(state.clone());
    let routes = routes::router(state);
    let routes = if base_path.is_empty() {
        routes
    } else {
        OpenApiRouter::new().nest(&base_path, routes)
    };
    // The association files live at the host's root whatever the prefix:
    // that is where iOS and Android look.
    let routes = routes.merge(well_known);
    Ok(ServiceApp {
        name: NAME,
        base_path,
        routes,
        render: error::render,
    })
}
