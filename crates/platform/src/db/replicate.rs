//! Litestream run as keel's child: started with the server, started again
//! if it stops, and asked to stop (SIGTERM: it syncs what it holds first)
//! when the server drains.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use super::replica::ReplicaConfig;
use super::replica_lag::Replication;
use crate::config::OutboundConfig;
use crate::outbound::{HttpClient, OutboundError};
use crate::tasks::Tasks;

/// How long Litestream has to sync and exit after it is asked to stop.
const STOP_GRACE: Duration = Duration::from_secs(15);

/// Why Litestream could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ReplicateError {
    #[error("cannot write Litestream's configuration {path}: {source}")]
    Config {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot ask Litestream how far behind it is: {0}")]
    Client(OutboundError),
    #[error("cannot start {program} (set KEEL_LITESTREAM_BIN, or install it): {source}")]
    Start {
        program: PathBuf,
        source: std::io::Error,
    },
}

/// What replication needs from the running server.
pub struct Replicator<'a> {
    pub tasks: &'a Tasks,
    /// For questions to Litestream's control socket.
    pub outbound: &'a OutboundConfig,
    /// Where the replica's lag is kept for `/readyz` (`Db::replication`).
    pub status: Replication,
}

/// Replicates `db` as `cfg` says, for as long as the tasks run: the
/// configuration is written beside the database (`litestream.yml`, 0600;
/// it holds no secret), the child restarted after a pause when it stops,
/// and its lag watched through its control socket (see [`super::replica_lag`]).
pub fn start(
    with: Replicator<'_>,
    cfg: ReplicaConfig,
    db: &Path,
    data_dir: &Path,
) -> Result<(), ReplicateError> {
    let path = data_dir.join("litestream.yml");
    let socket = control_socket(data_dir);
    std::fs::write(&path, cfg.litestream_yaml(db, socket.as_deref())).map_err(|source| {
        ReplicateError::Config {
            path: path.clone(),
            source,
        }
    })?;
    // The first start is tried here, so a missing program stops keel's
    // start with its reason instead of a line in the log.
    let first = spawn(&cfg, &path)?;
    tracing::info!(
        replica = %cfg.url.shown(),
        sync_ms = cfg.sync.as_millis() as u64,
        "replicating the database continuously (Litestream)"
    );
    // Without the socket the lag cannot be known: none is reported (rather
    // than one growing from the start).
    if let Some(socket) = socket {
        with.status.started(cfg.sync);
        watch_lag(&with, socket, cfg.sync)?;
    }
    let shared = Arc::new((cfg, path, std::sync::Mutex::new(Some(first))));
    let token = with.tasks.token();
    with.tasks
        .spawn_restarting("database replication", move || {
            let shared = shared.clone();
            let token = token.clone();
            async move {
                let (cfg, path, first) = &*shared;
                let child = first.lock().ok().and_then(|mut f| f.take());
                let child = match child {
                    Some(c) => Ok(c),
                    None => spawn(cfg, path),
                };
                match child {
                    Ok(child) => {
                        running(true);
                        watch(child, token, 2 * cfg.sync).await;
                        running(false);
                    }
                    Err(e) => tracing::error!("database replication: {e}"),
                }
            }
        });
    Ok(())
}

/// Where Litestream's control socket goes: beside the database, unless
/// that path is too long for a Unix socket (then the lag is not watched).
fn control_socket(data_dir: &Path) -> Option<PathBuf> {
    let socket = data_dir.join("litestream.sock");
    if socket.as_os_str().len() < 100 {
        return Some(socket);
    }
    tracing::warn!(
        socket = %socket.display(),
        "the data directory's path is too long for Litestream's control socket: the replica's lag is not watched"
    );
    None
}

fn watch_lag(
    with: &Replicator<'_>,
    socket: PathBuf,
    every: Duration,
) -> Result<(), ReplicateError> {
    let builder = reqwest::Client::builder().unix_socket(socket.clone());
    let http = HttpClient::with_builder(with.outbound, builder).map_err(ReplicateError::Client)?;
    let (status, stop) = (with.status.clone(), with.tasks.token());
    with.tasks.spawn("replica lag", async move {
        super::replica_lag::watch(http, &socket, status, every, stop).await;
    });
    Ok(())
}

/// `keel_dependency_up{dependency="replica"}`: 1 while Litestream runs.
fn running(up: bool) {
    metrics::gauge!("keel_dependency_up", "dependency" => "replica").set(f64::from(u8::from(up)));
}

fn spawn(cfg: &ReplicaConfig, config: &Path) -> Result<Child, ReplicateError> {
    let mut cmd = Command::new(&cfg.litestream);
    cmd.arg("replicate")
        .arg("-config")
        .arg(config)
        .envs(cfg.credentials())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    stop_with_keel(&mut cmd);
    cmd.spawn().map_err(|source| ReplicateError::Start {
        program: cfg.litestream.clone(),
        source,
    })
}

/// Waits for the child to stop, or for the drain: then, the listeners
/// being closed, gives it `settle` to sync the last writes (Litestream
/// does not sync on its way out before its first sync of a database), asks
/// it to stop and waits for it (killed after [`STOP_GRACE`]).
async fn watch(mut child: Child, token: CancellationToken, settle: Duration) {
    tokio::select! {
        status = child.wait() => {
            tracing::error!(status = ?status.ok(), "Litestream stopped: the database is not replicated until it is started again");
        }
        () = token.cancelled() => {
            if tokio::time::timeout(settle, child.wait()).await.is_ok() {
                return;
            }
            terminate(&child);
            match tokio::time::timeout(STOP_GRACE, child.wait()).await {
                Ok(_) => tracing::info!("Litestream synced and stopped"),
                Err(_) => {
                    tracing::warn!("Litestream did not stop within {STOP_GRACE:?}: killed");
                    let _ = child.kill().await;
                }
            }
        }
    }
}

/// Litestream is asked to stop (SIGTERM: it syncs what it holds) when
/// keel dies without stopping it (SIGKILL, the OOM killer): a second
/// replicator must never be left running beside the next keel's.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn stop_with_keel(cmd: &mut Command) {
    // SAFETY: between fork and exec the closure only calls prctl(2),
    // which is async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM)
                .map_err(std::io::Error::from)
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn stop_with_keel(_: &mut Command) {}

fn terminate(child: &Child) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
}
