//! keel: one process serving every keel service. `start` is the launch
//! function the binary and the test kit share; the [`Running`] process it
//! returns is stopped the same way by a signal and by a test.

pub mod cli;
pub mod db_copy;
mod early;
pub mod probe;
mod running;
pub mod services;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use keel_platform::config::{DatabaseUrl, PlatformConfig, Source, addr};
use keel_platform::db::replica::ReplicaConfig;
use keel_platform::db::replicate;
use keel_platform::http::{ServiceApp, SharedListener};
use keel_platform::jobs::{JobRegistry, Worker};
use keel_platform::migrate::Applied;
use keel_platform::service::{Build, Builder, HttpService};
use keel_platform::tasks::Tasks;
use keel_platform::{Platform, StartError, http, telemetry};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use early::Early;
pub use running::{Listening, RunError, Running};

// The names of the variables read here.
const METRICS_ADDR: &str = "KEEL_METRICS_ADDR";

/// Starts the named services (all when none), in seven phases:
///
/// 1. configuration: the platform's and each service's, read and checked
///    before anything is opened (a bad value names its variable);
/// 2. every listener bound (a taken port names its variable);
/// 3. the start-up servers on them: `/healthz` 200 from now on, other
///    requests held (a migration waiting on a lock fails no liveness probe);
/// 4. storage: the database and Redis opened, migrations applied;
/// 5. the server's background tasks and the job registry;
/// 6. the services built;
/// 7. serving: held requests handed to the services, each router on its
///    socket, the metrics listener, the job worker, and the stopper that
///    drains on [`Running::stop`].
pub async fn start(src: &Source, named: &[&str]) -> Result<Running, StartError> {
    let services = services::selection(named).map_err(StartError::other)?;
    let cfg = PlatformConfig::from_source(src)?;
    let replica = ReplicaConfig::from_source(src)?;
    let builders = services
        .iter()
        .map(|s| (s.configure)(src))
        .collect::<Result<Vec<_>, _>>()?;
    let listeners = bind_services(src, &services).await?;
    let metrics = bind(METRICS_ADDR, &cfg.metrics_addr).await?;
    let startup = http::Startup::new("opening the database");
    let early = Early::serve(
        &services,
        &listeners,
        &startup,
        cfg.http.shutdown_grace,
        cfg.http.start_hold,
    );
    let platform = open_storage(cfg, &services, &startup).await?;
    startup.set("starting the services");
    let tasks = background_tasks(&platform);
    let mut registry = JobRegistry::default();
    platform.mailer.register(&mut registry);
    let addrs = services
        .iter()
        .zip(&listeners)
        .map(|(s, l)| Ok((s.name, local_addr(s.listener.var, l)?)))
        .collect::<Result<Vec<_>, StartError>>()?;
    let apps = build_services(builders, &platform, &mut registry, &tasks, &addrs)?;
    replication(src, &platform, replica, &tasks, &addrs)?;
    if let Some(kind) = registry.registered_twice() {
        return Err(StartError::other(format!(
            "job kind {kind} is registered twice: one handler would never run"
        )));
    }
    serve(
        Launch {
            platform,
            tasks,
            registry,
            early,
        },
        apps.into_iter().zip(addrs).zip(listeners).collect(),
        metrics,
    )
    .await
}

async fn bind_services(
    src: &Source,
    services: &[&'static HttpService],
) -> Result<Vec<SharedListener>, StartError> {
    let mut listeners = Vec::with_capacity(services.len());
    for s in services {
        let l = s.listener;
        listeners.push(bind(l.var, &addr(src, l.var, l.default)?).await?);
    }
    Ok(listeners)
}

async fn open_storage(
    cfg: PlatformConfig,
    services: &[&'static HttpService],
    startup: &http::Startup,
) -> Result<Platform, StartError> {
    let platform = Platform::connect(cfg).await?;
    if platform.config.migrations.skip {
        tracing::info!("SKIP_MIGRATIONS=true: not migrating");
    } else {
        startup.set("migrating the database");
        platform
            .migrate(&services::migration_sets(services))
            .await?;
    }
    Ok(platform)
}

fn background_tasks(platform: &Platform) -> Tasks {
    let tasks = Tasks::new();
    tasks.spawn("metrics upkeep", telemetry::upkeep(tasks.token()));
    tasks.spawn(
        "traffic history",
        platform.traffic.clone().run(tasks.token()),
    );
    tasks.spawn(
        "idle database connections",
        platform.db.clone().close_idle_until(tasks.token()),
    );
    if platform.db.reach().is_watched() {
        let reach = platform.db.reach().clone();
        tasks.spawn("database reachability", reach.watch(tasks.token()));
    }
    if let Some(limit) = platform.config.http.slow_request {
        tasks.spawn(
            "runtime lag probe",
            keel_platform::http::lag::probe(limit, tasks.token()),
        );
    }
    tasks
}

/// Litestream started beside keel when a replica is configured (SQLite
/// only); in production, a warning when the embedded database is not
/// replicated at all.
fn replication(
    src: &Source,
    platform: &Platform,
    replica: Option<ReplicaConfig>,
    tasks: &Tasks,
    addrs: &[(&'static str, SocketAddr)],
) -> Result<(), StartError> {
    let DatabaseUrl::Sqlite(url) = &platform.config.database.url else {
        if replica.is_some() {
            tracing::warn!(
                "KEEL_REPLICA_URL is for the embedded SQLite database: on PostgreSQL, use its own archiving (docs/operations.md)"
            );
        }
        return Ok(());
    };
    let Some(db) = keel_platform::db::sqlite_file(url) else {
        return Ok(());
    };
    match replica {
        Some(cfg) => {
            let with = replicate::Replicator {
                tasks,
                outbound: &platform.config.outbound,
                status: platform.db.replication().clone(),
            };
            replicate::start(with, cfg, Path::new(db), &platform.config.data_dir)
                .map_err(|e| StartError::other(e.to_string()))
        }
        None => {
            let listen = addrs.first().map(|(_, a)| *a);
            if listen.is_some_and(|a| keel_platform::config::production(src, a).unwrap_or(true)) {
                tracing::warn!(
                    "the database is not replicated: a lost disk loses every write since the last backup (set KEEL_REPLICA_URL; docs/operations.md)"
                );
            }
            Ok(())
        }
    }
}

fn build_services(
    builders: Vec<Builder>,
    platform: &Platform,
    registry: &mut JobRegistry,
    tasks: &Tasks,
    addrs: &[(&'static str, SocketAddr)],
) -> Result<Vec<ServiceApp>, StartError> {
    // The console is last in the table: it takes the areas the services
    // before it added.
    let mut console = Vec::new();
    builders
        .into_iter()
        .map(|build| {
            build(&mut Build {
                platform,
                jobs: registry,
                tasks,
                listening: addrs,
                console: &mut console,
            })
        })
        .collect()
}

/// What the last phase starts from.
struct Launch {
    platform: Platform,
    tasks: Tasks,
    registry: JobRegistry,
    early: Early,
}

type Bound = ((ServiceApp, (&'static str, SocketAddr)), SharedListener);

async fn serve(
    launch: Launch,
    services: Vec<Bound>,
    metrics: SharedListener,
) -> Result<Running, StartError> {
    let Launch {
        platform,
        tasks,
        registry,
        early,
    } = launch;
    let grace = platform.config.http.shutdown_grace;
    let shutdown = CancellationToken::new();
    let mut servers = JoinSet::new();
    let mut listening = Vec::with_capacity(services.len());
    let mut sockets = Vec::with_capacity(services.len());
    let mut routers = Vec::with_capacity(services.len());
    for ((app, (name, addr)), listener) in services {
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
        sockets.push((name, listener));
    }
    // Requests held while starting go to the services now; then the
    // services take over their sockets.
    early.stop(&routers).await;
    for (router, (name, listener)) in routers.into_iter().zip(sockets) {
        let token = shutdown.clone();
        servers.spawn(async move {
            http::serve(listener, router, token, grace)
                .await
                .map_err(|e| RunError::Serve(name, e))
        });
    }
    let metrics_addr = local_addr(METRICS_ADDR, &metrics)?;
    let token = shutdown.clone();
    let sampler = platform.metrics_sampler(&tasks, registry.kinds());
    servers.spawn(async move {
        http::serve(
            metrics,
            telemetry::metrics_router(Some(sampler)),
            token,
            grace,
        )
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
    let stops = Arc::new(tokio::sync::Notify::new());
    tokio::spawn(running::stopper(
        stops.clone(),
        shutdown.clone(),
        platform.draining.clone(),
        platform.config.http.shutdown_drain,
    ));
    Ok(Running {
        platform,
        listening,
        metrics_addr,
        shutdown,
        servers,
        tasks,
        stops,
    })
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
