//! The services of the process: the one table `keel serve`, `keel migrate`
//! and the command line read. Adding a service is adding its entry here.

use keel_platform::migrate::MigrationSet;
use keel_platform::service::Service;

/// Every service, in the order `keel serve` starts them.
pub static SERVICES: &[&dyn Service] = &[
    &keel_accounts::SERVICE,
    &keel_usage_alerts::SERVICE,
    &keel_svc::SERVICE,
    &keel_channel::WEB_SERVICE,
    &keel_channel::API_SERVICE,
    &keel_quotebot::SERVICE,
];

/// The services `keel serve` can start (those with a listener).
pub fn http() -> impl Iterator<Item = &'static dyn Service> {
    SERVICES.iter().copied().filter(|s| s.listener().is_some())
}

/// The names of the HTTP services, for the command line.
pub fn http_names() -> Vec<&'static str> {
    http().map(|s| s.name()).collect()
}

/// A service name the command line gave that names none.
#[derive(Debug, thiserror::Error)]
#[error("no service named {name:?} (services: {known})", known = http_names().join(", "))]
pub struct UnknownService {
    name: String,
}

/// The named HTTP services (all of them when none is named), each once, in
/// table order; an unknown name is an error naming it.
pub fn selection(named: &[impl AsRef<str>]) -> Result<Vec<&'static dyn Service>, UnknownService> {
    if let Some(unknown) = named
        .iter()
        .map(AsRef::as_ref)
        .find(|n| !http().any(|s| s.name() == *n))
    {
        return Err(UnknownService {
            name: unknown.to_owned(),
        });
    }
    Ok(http()
        .filter(|s| named.is_empty() || named.iter().any(|n| n.as_ref() == s.name()))
        .collect())
}

/// The migration sets `services` need, each once, in order.
pub fn migration_sets(services: &[&'static dyn Service]) -> Vec<&'static MigrationSet> {
    let mut sets: Vec<&'static MigrationSet> = Vec::new();
    for set in services.iter().filter_map(|s| s.migrations()) {
        if !sets.iter().any(|have| have.component == set.component) {
            sets.push(set);
        }
    }
    sets
}

/// The service whose subcommand is `name`.
pub fn with_command(name: &str) -> Option<&'static dyn Service> {
    SERVICES
        .iter()
        .copied()
        .find(|s| s.command().is_some_and(|c| c.get_name() == name))
}
