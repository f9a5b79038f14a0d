//! What a service is to the process. Two tables in the binary list them:
//! the HTTP services `keel serve` starts ([`HttpService`]) and the
//! subcommands of `keel` ([`Command`]); nothing else matches on names.

use futures::future::BoxFuture;

use crate::Platform;
use crate::StartError;
use crate::config::{ConfigError, Source};
use crate::http::{Render, ServiceApp};
use crate::jobs::JobRegistry;
use crate::migrate::MigrationSet;
use crate::tasks::Tasks;

/// Where `keel serve` listens for a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listener {
    /// The variable holding the address, e.g. `KEEL_SVC_ADDR`.
    pub var: &'static str,
    pub default: &'static str,
}

/// What a service is built with.
pub struct Build<'a> {
    pub platform: &'a Platform,
    /// Register the handlers of the service's jobs here.
    pub jobs: &'a mut JobRegistry,
    /// Spawn the service's background tasks here (the server owns them).
    pub tasks: &'a Tasks,
    /// Where each service this process serves listens (ports resolved).
    pub listening: &'a [(&'static str, std::net::SocketAddr)],
    /// The operator console's areas: a service adds its own here; the
    /// console, built last, takes them all.
    pub console: &'a mut Vec<crate::console::Area>,
}

impl Build<'_> {
    /// The address `service` listens on in this process, if it is served here.
    pub fn addr_of(&self, service: &str) -> Option<std::net::SocketAddr> {
        self.listening
            .iter()
            .find(|(name, _)| *name == service)
            .map(|(_, addr)| *addr)
    }
}

/// A service's configuration, read and checked before anything opens,
/// with what builds the service from it.
pub type Builder = Box<dyn FnOnce(&mut Build<'_>) -> Result<ServiceApp, StartError> + Send>;

/// The builder of `cfg` by `app`: what a service's `configure` returns.
pub fn builder<C: Send + 'static>(
    cfg: C,
    app: fn(&mut Build<'_>, C) -> Result<ServiceApp, StartError>,
) -> Builder {
    Box::new(move |b| app(b, cfg))
}

/// An HTTP service of `keel serve`. Each service crate declares its own
/// (`SERVICE`); the binary lists them.
pub struct HttpService {
    /// Its name on the command line, in logs and metrics.
    pub name: &'static str,
    pub listener: Listener,
    /// The migrations it needs (shared sets are applied once).
    pub migrations: &'static MigrationSet,
    /// Reads its configuration; a bad value names its variable.
    pub configure: fn(&Source) -> Result<Builder, ConfigError>,
    /// Its error shape, as it renders the platform's errors (also while
    /// the process starts, before it is built).
    pub render: Render,
    /// Its routes that check a credential, each behind the platform's
    /// guard (`guard::Door`): a test walks the route table against them.
    pub doors: &'static [crate::guard::Door],
}

/// A subcommand of `keel` (`keel svc ...`): its definition and what runs
/// it, printing what it returns.
pub struct Command {
    pub command: fn() -> clap::Command,
    pub run: for<'a> fn(&'a Source, &'a clap::ArgMatches) -> BoxFuture<'a, anyhow::Result<String>>,
}

impl Command {
    /// Its name on the command line.
    pub fn name(&self) -> String {
        (self.command)().get_name().to_owned()
    }
}
