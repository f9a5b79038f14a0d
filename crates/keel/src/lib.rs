//! keel: one process serving every keel service. `start` is the launch
//! function the binary and the test kit share.

pub mod cli;
pub mod db_copy;
pub mod probe;
pub mod services;

use std::net::SocketAddr;

use keel_platform::config::{PlatformConfig, Source, addr};
use keel_platform::http::SharedListener;
use keel_platform::jobs::{JobRegistry, Worker};
use keel_platform::migrate::Applied;
use keel_platform::service::{Build, HttpService};
use keel_platform::tasks::Tasks;
use keel_platform::{Platform, StartError, http, telemetry};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// A service that is up.
#[derive(Debug, Clone)]
pub struct Listening {
    pub service: &'static str,
    pub addr: SocketAddr,
    /// `http://<addr><base path>`
    pub base_url: String,
}

/// Why a task of the process stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}: {1}")]
    Serve(&'static str, std::io::Error),
    #[error("a task panicked: {0}")]
    Panicked(String),
}

/// The running process: listeners, the job worker, background tasks, and
/// the way to stop them.
pub struct Running {
    pub platform: Platform,
    pub listening: Vec<Listening>,
    pub metrics_addr: SocketAddr,
    shutdown: CancellationToken,
    servers: JoinSet<Result<(), RunError>>,
    tasks: Tasks,
}

impl Running {
    /// The base URL of a running service.
    pub fn url(&self, service: &str) -> Option<&str> {
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

    /// The process's background tasks.
    pub fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// Waits until the listeners and the job worker have stopped, then
    /// lets the background tasks finish what they hold; the first failure,
    /// if any. A listener that stops on its own stops the others too.
    pub async fn wait(mut self) -> Result<(), RunError> {
        let mut first_err = None;
        while let Some(joined) = self.servers.join_next().await {
            let result = joined
                .map_err(|e| RunError::Panicked(e.to_string()))
                .and_then(|r| r);
            if !self.shutdown.is_cancelled() {
                tracing::error!(?result, "a task stopped on its own; shutting down");
                self.shutdown.cancel();
            }
            if let (Err(e), None) = (result, &first_err) {
                first_err = Some(e);
            }
        }
        self.tasks
            .shutdown(self.platform.config.http.shutdown_grace)
            .await;
        self.platform.db.clone().close().await;
        first_err.map_or(Ok(()), Err)
    }
}

/// Reads configuration, binds every listener, opens storage, migrates,
/// and starts the named services (all when none), the job worker and the
/// metrics listener. From the moment they are bound until the services are
/// built, the listeners answer `/healthz` 200 and everything else 503
/// (see [`http::starting`]): a migration waiting on a lock does not fail a
/// liveness probe.
pub async fn start(src: &Source, named: &[&str]) -> Result<Running, StartError> {
    let services = services::selection(named).map_err(StartError::other)?;
    let cfg = PlatformConfig::from_source(src)?;
    let mut configs = Vec::with_capacity(services.len());
    let mut listeners = Vec::with_capacity(services.len());
    for s in &services {
        configs.push((s.configure)(src)?);
    }
    for s in &services {
        let l = s.listener;
        listeners.push(bind(l.var, &addr(src, l.var, l.default)?).await?);
    }
    let metrics_listener = bind("KEEL_METRICS_ADDR", &cfg.metrics_addr).await?;
    let grace = cfg.http.shutdown_grace;
    let startup = http::Startup::new("opening the database");
    let early = Early::serve(
        &services,
        &listeners,
        &startup,
        (grace, cfg.http.start_hold),
    );
    let platform = Platform::connect(cfg).await?;
    if platform.config.migrations.skip {
        tracing::info!("SKIP_MIGRATIONS=true: not migrating");
    } else {
        startup.set("migrating the database");
        platform
            .migrate(&services::migration_sets(&services))
            .await?;
    }
    startup.set("starting the services");
    let shutdown = CancellationToken::new();
    let tasks = Tasks::new();
    tasks.spawn("metrics upkeep", telemetry::upkeep(tasks.token()));
    tasks.spawn(
        "idle database connections",
        platform.db.clone().close_idle_until(tasks.token()),
    );
    if platform.db.reach().is_watched() {
        let reach = platform.db.reach().clone();
        tasks.spawn("database reachability", reach.watch(tasks.token()));
    }
    let mut registry = JobRegistry::default();
    platform.mailer.register(&mut registry);
    let mut addrs = Vec::with_capacity(services.len());
    for (service, listener) in services.iter().zip(&listeners) {
        addrs.push((service.name, local_addr(service.listener.var, listener)?));
    }
    let mut apps = Vec::with_capacity(services.len());
    for config in configs {
        apps.push(config(&mut Build {
            platform: &platform,
            jobs: &mut registry,
            tasks: &tasks,
            listening: &addrs,
        })?);
    }
    let mut servers = JoinSet::new();
    let mut listening = Vec::with_capacity(services.len());
    let mut routers = Vec::with_capacity(services.len());
    for (app, (name, addr)) in apps.into_iter().zip(addrs) {
        listening.push(Listening {
            service: name,
            addr,
            base_url: format!("http://{addr}{}", app.base_path),
        });
        routers.push(http::finish(
            app,
            platform.readiness(&tasks),
            &platform.config.http,
        ));
    }
    // Requests held while starting go to the services now; then the
    // services take over their sockets.
    early.stop(&routers).await;
    for ((router, listener), l) in routers.into_iter().zip(listeners).zip(&listening) {
        let name = l.service;
        let token = shutdown.clone();
        servers.spawn(async move {
            http::serve(listener, router, token, grace)
                .await
                .map_err(|e| RunError::Serve(name, e))
        });
    }
    let metrics_addr = local_addr("KEEL_METRICS_ADDR", &metrics_listener)?;
    let token = shutdown.clone();
    servers.spawn(async move {
        http::serve(metrics_listener, telemetry::metrics_router(), token, grace)
            .await
            .map_err(|e| RunError::Serve("metrics", e))
    });
    let worker = Worker::new(platform.db.clone(), registry, platform.config.jobs.clone())
        .woken_by(platform.jobs_wake.clone());
    let token = shutdown.clone();
    servers.spawn(async move {
        worker.run(token, grace).await;
        Ok(())
    });
    Ok(Running {
        platform,
        listening,
        metrics_addr,
        shutdown,
        servers,
        tasks,
    })
}

/// The start-up servers on the services' listeners, and where each hands
/// its held requests to its service.
struct Early {
    stop: CancellationToken,
    servers: JoinSet<()>,
    handovers: Vec<http::Handover>,
}

impl Early {
    fn serve(
        services: &[&'static HttpService],
        listeners: &[SharedListener],
        startup: &http::Startup,
        (grace, hold): (std::time::Duration, std::time::Duration),
    ) -> Self {
        let stop = CancellationToken::new();
        let mut servers = JoinSet::new();
        let mut handovers = Vec::with_capacity(services.len());
        for (service, listener) in services.iter().zip(listeners) {
            let (handover, takeover) = http::takeover();
            handovers.push(handover);
            let (router, listener, token) = (
                startup.router(service.render, takeover, hold),
                listener.clone(),
                stop.clone(),
            );
            servers.spawn(async move {
                if let Err(e) = http::serve(listener, router, token, grace).await {
                    tracing::warn!(error = %e, "the start-up listener stopped");
                }
            });
        }
        Self {
            stop,
            servers,
            handovers,
        }
    }

    /// Hands each service its router (the requests held meanwhile are
    /// answered by it), then stops; the requests under way finish first.
    async fn stop(mut self, routers: &[axum::Router]) {
        for (handover, router) in self.handovers.iter().zip(routers) {
            handover.ready(router.clone());
        }
        self.stop.cancel();
        while self.servers.join_next().await.is_some() {}
    }
}

/// Applies the migrations the named services (all when none) need.
pub async fn migrate(src: &Source, named: &[&str]) -> Result<Vec<Applied>, StartError> {
    let services = services::selection(named).map_err(StartError::other)?;
    let platform = Platform::connect(PlatformConfig::from_source(src)?).await?;
    let applied = platform.migrate(&services::migration_sets(&services)).await;
    platform.db.clone().close().await;
    applied
}

async fn bind(var: &str, addr: &SocketAddr) -> Result<SharedListener, StartError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| StartError::Bind {
            var: var.to_owned(),
            addr: addr.to_string(),
            reason: e.to_string(),
        })?;
    Ok(SharedListener::new(listener))
}

fn local_addr(var: &str, listener: &SharedListener) -> Result<SocketAddr, StartError> {
    listener.local_addr().map_err(|e| StartError::Bind {
        var: var.to_owned(),
        addr: "?".to_owned(),
        reason: e.to_string(),
    })
}
