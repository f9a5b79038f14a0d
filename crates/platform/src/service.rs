//! What a service is to the process: the registry entry `keel serve`,
//! `keel migrate`, readiness and the command line iterate over. Adding a
//! service is writing one `impl Service` and adding it to the binary's
//! table; nothing else matches on service names.

use futures::future::BoxFuture;

use crate::config::{ConfigError, Source};
use crate::http::{Render, ServiceApp};
use crate::jobs::JobRegistry;
use crate::migrate::MigrationSet;
use crate::tasks::Tasks;
use crate::{Platform, StartError};

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

/// A service's configuration, read and checked before anything opens;
/// building it makes the service's routes.
pub trait Configured: Send {
    fn build(self: Box<Self>, b: &mut Build<'_>) -> Result<ServiceApp, StartError>;
}

/// A service of the process.
pub trait Service: Sync + 'static {
    /// Its name on the command line, in logs and metrics.
    fn name(&self) -> &'static str;

    /// Its HTTP listener; `None` for a service `keel serve` does not start.
    fn listener(&self) -> Option<Listener>;

    /// The migrations it needs (shared sets are applied once).
    fn migrations(&self) -> Option<&'static MigrationSet>;

    /// Reads its configuration; a bad value names its variable.
    fn configure(&self, src: &Source) -> Result<Box<dyn Configured>, ConfigError>;

    /// How it renders the platform's errors (while the process starts,
    /// before it is built); `None`: plain JSON.
    fn render(&self) -> Option<Render> {
        None
    }

    /// Its own subcommand (`keel <name> ...`), if it has one.
    fn command(&self) -> Option<clap::Command> {
        None
    }

    /// Runs its subcommand; what to print.
    fn run_command<'a>(
        &'a self,
        _src: &'a Source,
        _matches: &'a clap::ArgMatches,
    ) -> BoxFuture<'a, anyhow::Result<String>> {
        Box::pin(async { Err(anyhow::anyhow!("this service has no commands")) })
    }
}

/// A service's own subcommand: its definition and how to run it.
pub struct Commands {
    pub command: fn() -> clap::Command,
    pub run: for<'a> fn(&'a Source, &'a clap::ArgMatches) -> BoxFuture<'a, anyhow::Result<String>>,
}

/// The usual service: an HTTP listener, a migration set, a configuration
/// that builds it, and perhaps a subcommand. Each service crate declares
/// one as its `SERVICE`; the binary lists them.
pub struct HttpService {
    pub name: &'static str,
    pub listener: Listener,
    pub migrations: &'static MigrationSet,
    pub configure: fn(&Source) -> Result<Box<dyn Configured>, ConfigError>,
    /// Its error shape, as its built app renders the platform's errors.
    pub render: Render,
    pub commands: Option<Commands>,
}

impl Service for HttpService {
    fn name(&self) -> &'static str {
        self.name
    }

    fn listener(&self) -> Option<Listener> {
        Some(self.listener)
    }

    fn migrations(&self) -> Option<&'static MigrationSet> {
        Some(self.migrations)
    }

    fn configure(&self, src: &Source) -> Result<Box<dyn Configured>, ConfigError> {
        (self.configure)(src)
    }

    fn render(&self) -> Option<Render> {
        Some(self.render)
    }

    fn command(&self) -> Option<clap::Command> {
        self.commands.as_ref().map(|c| (c.command)())
    }

    fn run_command<'a>(
        &'a self,
        src: &'a Source,
        matches: &'a clap::ArgMatches,
    ) -> BoxFuture<'a, anyhow::Result<String>> {
        match &self.commands {
            Some(c) => (c.run)(src, matches),
            None => Box::pin(async { Err(anyhow::anyhow!("{} has no commands", self.name)) }),
        }
    }
}
