//! quotebot: the scheduled-quote chat bot runtime.
//! PostgreSQL and Redis only; run with `keel quotebot ...`, not `keel
//! serve`. See docs/quotebot.md.

pub mod baseline;
pub mod cli;
pub mod config;
pub mod db;
pub mod domain;
pub mod health;
pub mod manager;
pub mod reconcile;
pub mod schema;
pub mod shard;
pub mod signals;
pub mod starter_quotes;

use futures::future::BoxFuture;
use keel_platform::config::{ConfigError, Source};
use keel_platform::migrate::MigrationSet;
use keel_platform::service::{Configured, Listener, Service};

pub const NAME: &str = "quotebot";

/// quotebot, as the process sees it: no listener under `keel serve`, its
/// own migrations and commands.
pub struct Quotebot;

pub static SERVICE: Quotebot = Quotebot;

impl Service for Quotebot {
    fn name(&self) -> &'static str {
        NAME
    }

    fn listener(&self) -> Option<Listener> {
        None
    }

    fn migrations(&self) -> Option<&'static MigrationSet> {
        // Not part of `keel migrate`: quotebot's database is its own
        // (PostgreSQL only); `keel quotebot migrate` applies it.
        None
    }

    fn configure(&self, _src: &Source) -> Result<Box<dyn Configured>, ConfigError> {
        Err(ConfigError::invalid(
            NAME,
            "quotebot is not served by `keel serve`; run `keel quotebot`",
        ))
    }

    fn command(&self) -> Option<clap::Command> {
        Some(cli::command())
    }

    fn run_command<'a>(
        &'a self,
        src: &'a Source,
        matches: &'a clap::ArgMatches,
    ) -> BoxFuture<'a, anyhow::Result<String>> {
        Box::pin(cli::run(src, matches))
    }
}
