//! quotebot: the scheduled-quote chat bot runtime.
//! PostgreSQL and Redis only; run with `keel quotebot ...`, not `keel
//! serve`. See docs/quotebot.md.

pub mod baseline;
pub mod cli;
pub mod config;
pub mod db;
pub mod domain;
pub mod gateway;
pub mod health;
pub mod manager;
pub mod reconcile;
pub mod schema;
pub mod shard;
pub mod starter_quotes;
pub mod watchdog;

use keel_platform::service::Command;

pub const NAME: &str = "quotebot";

/// `keel quotebot ...`: quotebot runs as a command of its own, not under
/// `keel serve` (it has no HTTP API; its health endpoints are its own).
pub static COMMAND: Command = Command {
    command: cli::command,
    run: |src, matches| Box::pin(cli::run(src, matches)),
};
