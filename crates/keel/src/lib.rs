//! keel: one process serving the seed services. `start` is the launch
//! function the binary and the test kit share.

pub mod cli;
mod services;
pub mod svc_cli;

use std::net::SocketAddr;

use keel_platform::config::{PlatformConfig, Source, addr};
use keel_platform::jobs::{JobRegistry, Worker};
use keel_platform::migrate::Applied;
use keel_platform::{Platform, StartError, http, telemetry};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

pub use services::{ServiceConfig, ServiceName};

/// A service that is up.
#[derive(Debug, Clone)]
pub struct Listening {
    pub service: ServiceName,
    pub addr: SocketAddr,
    /// `http://<addr><base path>`
    pub base_url: String,
}

/// The running process: listeners, the job worker, and the way to stop them.
pub struct Running {
    pub platform: Platform,
    pub listening: Vec<Listening>,
    pub metrics_addr: SocketAddr,
    shutdown: CancellationToken,
    tasks: JoinSet<Result<(), String>>,
}

impl Running {
    /// The base URL of a running service.
    pub fn url(&self, service: ServiceName) -> Option<&str> {
        self.listening
            .iter()
            .find(|l| l.service == service)
            .map(|l| l.base_url.as_str())
    }

    /// Starts a graceful shutdown.
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }

    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Waits until every task has stopped; the first failure, if any.
    /// A task that stops on its own stops the others too.
    pub async fn wait(mut self) -> Result<(), String> {
        let mut first_err = None;
        while let Some(joined) = self.tasks.join_next().await {
            let result = joined.map_err(|e| e.to_string()).and_then(|r| r);
            if !self.shutdown.is_cancelled() {
                tracing::error!(?result, "a task stopped on its own; shutting down");
                self.shutdown.cancel();
            }
            if let (Err(e), None) = (result, &first_err) {
                first_err = Some(e);
            }
        }
        self.platform.db.clone().close().await;
        first_err.map_or(Ok(()), Err)
    }
}

/// Reads configuration, binds every listener, opens storage, migrates,
/// and starts the services and the job worker.
pub async fn start(src: &Source, named: &[ServiceName]) -> Result<Running, StartError> {
    let services = ServiceName::selection(named);
    let cfg = PlatformConfig::from_source(src)?;
    let mut configs = Vec::with_capacity(services.len());
    for s in &services {
        configs.push((*s, ServiceConfig::load(*s, src)?));
    }
    let mut listeners = Vec::with_capacity(services.len());
    for s in &services {
        listeners.push(bind(s.addr_var(), &addr(src, s.addr_var(), s.default_addr())?).await?);
    }
    let metrics_listener = bind("KEEL_METRICS_ADDR", &cfg.metrics_addr).await?;
    let platform = Platform::connect(cfg).await?;
    if platform.config.migrations.skip {
        tracing::info!("SKIP_MIGRATIONS=true: not migrating");
    } else {
        platform
            .migrate(&ServiceName::migration_sets(&services))
            .await?;
    }
    let shutdown = CancellationToken::new();
    let grace = platform.config.http.shutdown_grace;
    let mut tasks = JoinSet::new();
    let mut registry = JobRegistry::default();
    platform.mailer.register(&mut registry);
    let mut listening = Vec::with_capacity(services.len());
    for ((service, config), listener) in configs.into_iter().zip(listeners) {
        let app = config.build(&platform, &mut registry)?;
        let addr = local_addr(service.addr_var(), &listener)?;
        listening.push(Listening {
            service,
            addr,
            base_url: format!("http://{addr}{}", app.base_path),
        });
        let router = http::finish(app, platform.readiness(), &platform.config.http);
        let token = shutdown.clone();
        tasks.spawn(async move {
            http::serve(listener, router, token, grace)
                .await
                .map_err(|e| format!("{service}: {e}"))
        });
    }
    let metrics_addr = local_addr("KEEL_METRICS_ADDR", &metrics_listener)?;
    let token = shutdown.clone();
    tasks.spawn(async move {
        http::serve(metrics_listener, telemetry::metrics_router(), token, grace)
            .await
            .map_err(|e| format!("metrics: {e}"))
    });
    let worker = Worker::new(platform.db.clone(), registry, platform.config.jobs.clone());
    let token = shutdown.clone();
    tasks.spawn(async move {
        worker.run(token, grace).await;
        Ok(())
    });
    Ok(Running {
        platform,
        listening,
        metrics_addr,
        shutdown,
        tasks,
    })
}

/// Applies the migrations the named services (all when none) need.
pub async fn migrate(src: &Source, named: &[ServiceName]) -> Result<Vec<Applied>, StartError> {
    let services = ServiceName::selection(named);
    let platform = Platform::connect(PlatformConfig::from_source(src)?).await?;
    let applied = platform
        .migrate(&ServiceName::migration_sets(&services))
        .await;
    platform.db.clone().close().await;
    applied
}

async fn bind(var: &str, addr: &SocketAddr) -> Result<TcpListener, StartError> {
    TcpListener::bind(addr).await.map_err(|e| StartError::Bind {
        var: var.to_owned(),
        addr: addr.to_string(),
        reason: e.to_string(),
    })
}

fn local_addr(var: &str, listener: &TcpListener) -> Result<SocketAddr, StartError> {
    listener.local_addr().map_err(|e| StartError::Bind {
        var: var.to_owned(),
        addr: "?".to_owned(),
        reason: e.to_string(),
    })
}
