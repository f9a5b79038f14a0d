//! The operator console: one signed-in place for what an operator does to
//! a running keel (users, jobs, health, the audit log). Operators sign in
//! with a password and a TOTP code; each area needs its role. Services add
//! areas ([`keel_platform::console::Area`]); the binary builds the console
//! after them. See docs/operations.md, "Operator console".

mod auth;
mod cli;
pub mod config;
pub mod domain;
pub mod entity;
mod error;
mod page;
mod routes;
mod schema;
mod state;

use keel_platform::StartError;
use keel_platform::http::ServiceApp;
use keel_platform::service::{Build, Command, HttpService, Listener, builder};

pub use config::Config;
pub use schema::MIGRATIONS;

use crate::state::{AppState, AreaView, Inner};

pub const NAME: &str = "console";

/// The console, as the process sees it. It must come after every service
/// that adds an area in the binary's table.
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

/// `keel operator ...`.
pub static COMMAND: Command = Command {
    command: cli::command,
    run: |src, matches| Box::pin(cli::run(src, matches)),
};

fn app(b: &mut Build<'_>, cfg: Config) -> Result<ServiceApp, StartError> {
    let areas = std::mem::take(b.console);
    let state = AppState::new(Inner {
        platform: b.platform.clone(),
        cfg,
        readiness: b.platform.readiness(b.tasks),
        job_kinds: b.jobs.kinds(),
        areas: areas
            .iter()
            .map(|a| AreaView {
                name: a.name,
                title: a.title,
                role: a.role,
            })
            .collect(),
        services: b.listening.iter().map(|(name, _)| *name).collect(),
    });
    let routes = routes::router(state, areas).merge(page::router());
    Ok(ServiceApp {
        name: NAME,
        base_path: String::new(),
        routes,
        render: error::render,
    })
}
