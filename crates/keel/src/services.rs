//! The services of the process, in two tables: the HTTP services `keel
//! serve` and `keel migrate` read, and the subcommands of `keel`. Adding a
//! service is adding its entries here.

use keel_platform::migrate::MigrationSet;
use keel_platform::service::{Command, HttpService};

/// Every HTTP service, in the order `keel serve` starts them.
pub static SERVICES: &[&HttpService] = &[
    &keel_accounts::SERVICE,
    &keel_usage_alerts::SERVICE,
    &keel_svc::SERVICE,
    &keel_channel::WEB_SERVICE,
    &keel_channel::API_SERVICE,
    // Last: it takes the console areas the services above added.
    &keel_console::SERVICE,
];

/// Every subcommand of a service (`keel svc ...`, `keel quotebot ...`).
pub static COMMANDS: &[&Command] = &[
    &keel_accounts::COMMAND,
    &keel_svc::COMMAND,
    &keel_channel::COMMAND,
    &keel_quotebot::COMMAND,
    &keel_console::COMMAND,
];

/// The HTTP services.
pub fn http() -> impl Iterator<Item = &'static HttpService> {
    SERVICES.iter().copied()
}

/// The names of the HTTP services, for the command line.
pub fn http_names() -> Vec<&'static str> {
    http().map(|s| s.name).collect()
}

/// A service name the command line gave that names none.
#[derive(Debug, thiserror::Error)]
#[error("no service named {name:?} (services: {known})", known = http_names().join(", "))]
pub struct UnknownService {
    name: String,
}

/// The named HTTP services (all of them when none is named), each once, in
/// table order; an unknown name is an error naming it.
pub fn selection(named: &[impl AsRef<str>]) -> Result<Vec<&'static HttpService>, UnknownService> {
    if let Some(unknown) = named
        .iter()
        .map(AsRef::as_ref)
        .find(|n| !http().any(|s| s.name == *n))
    {
        return Err(UnknownService {
            name: unknown.to_owned(),
        });
    }
    Ok(http()
        .filter(|s| named.is_empty() || named.iter().any(|n| n.as_ref() == s.name))
        .collect())
}

/// The migration sets `services` need, each once, in order.
pub fn migration_sets(services: &[&'static HttpService]) -> Vec<&'static MigrationSet> {
    let mut sets: Vec<&'static MigrationSet> = Vec::new();
    for set in services.iter().map(|s| s.migrations) {
        if !sets.iter().any(|have| have.component == set.component) {
            sets.push(set);
        }
    }
    sets
}

/// The subcommand named `name`.
pub fn command(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().copied().find(|c| c.name() == name)
}
