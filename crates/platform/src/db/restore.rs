//! `keel restore`: the SQLite database brought back from its replica (the
//! newest state, or the state at a time) with Litestream's own restore,
//! checked, and put in place only when nothing is there or when told.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde::Deserialize;
use tokio::process::Command;

use super::replica::{LITESTREAM_BIN, REPLICA_URL, ReplicaConfig};
use crate::config::{DatabaseUrl, PlatformConfig, Source};

/// Why a restore did not happen.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("keel restore: name the replica with --from URL or {REPLICA_URL}")]
    NoReplica,
    #[error("the replica: {0}")]
    BadReplica(String),
    #[error("--at {0:?}: a time as 2026-11-29T03:00:00Z")]
    BadTime(String),
    #[error("keel restore restores the embedded SQLite database; on PostgreSQL use its own tools")]
    Postgres,
    #[error("the database is in memory: name a file with --to")]
    InMemory,
    #[error(
        "{0} exists: keel restore never overwrites a database unless told (stop keel, then add --force)"
    )]
    Exists(PathBuf),
    #[error("cannot run {program} (set {LITESTREAM_BIN}, or install it): {source}")]
    Program {
        program: PathBuf,
        source: std::io::Error,
    },
    #[error("Litestream could not restore: {0}")]
    Litestream(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RestoreError + '_ {
    move |source| RestoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// What `keel restore` was asked.
pub struct Restore {
    pub from: Option<String>,
    pub at: Option<String>,
    pub to: Option<PathBuf>,
    pub force: bool,
}

/// What was restored.
pub struct Restored {
    pub path: PathBuf,
    pub txid: String,
    /// When the newest transaction it holds was written.
    pub last_write: Option<String>,
}

#[derive(Deserialize)]
struct Summary {
    txid: String,
}

#[derive(Deserialize)]
struct Ltx {
    max_txid: String,
    timestamp: String,
}

/// Restores into `--to` (default: the configured database file).
pub async fn run(
    src: &Source,
    cfg: &PlatformConfig,
    ask: Restore,
) -> Result<Restored, RestoreError> {
    // The replica as `keel serve` reads it (program, credentials), from
    // --from when given.
    let mut src = src.clone();
    if let Some(from) = ask.from {
        src.set(REPLICA_URL, from);
    }
    let replica = ReplicaConfig::from_source(&src)
        .map_err(|e| RestoreError::BadReplica(e.to_string()))?
        .ok_or(RestoreError::NoReplica)?;
    let to = match ask.to {
        Some(to) => to,
        None => configured_file(cfg)?,
    };
    if to.exists() && !ask.force {
        return Err(RestoreError::Exists(to));
    }
    let partial = to.with_extension("restoring");
    remove_with_sidecars(&partial)?;
    let mut args = vec!["restore".to_owned(), "-json".to_owned()];
    args.extend(["-integrity-check".to_owned(), "full".to_owned()]);
    args.extend(["-o".to_owned(), partial.display().to_string()]);
    if let Some(at) = &ask.at {
        chrono::DateTime::parse_from_rfc3339(at).map_err(|_| RestoreError::BadTime(at.clone()))?;
        args.extend(["-timestamp".to_owned(), at.clone()]);
    }
    args.push(replica.url.as_litestream());
    let out = litestream(&replica, &args).await?;
    let summary: Summary = serde_json::from_str(&out)
        .map_err(|_| RestoreError::Litestream(format!("an answer keel cannot read: {out}")))?;
    remove_with_sidecars(&to)?;
    std::fs::rename(&partial, &to).map_err(io(&to))?;
    let last_write = last_write(&replica, &summary.txid).await;
    Ok(Restored {
        path: to,
        txid: summary.txid,
        last_write,
    })
}

fn configured_file(cfg: &PlatformConfig) -> Result<PathBuf, RestoreError> {
    let DatabaseUrl::Sqlite(url) = &cfg.database.url else {
        return Err(RestoreError::Postgres);
    };
    super::sqlite_file(url)
        .map(PathBuf::from)
        .ok_or(RestoreError::InMemory)
}

/// Removes `db` and its `-wal` and `-shm` files, where they are.
fn remove_with_sidecars(db: &Path) -> Result<(), RestoreError> {
    for suffix in ["", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", db.display()));
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&p)(e)),
        }
    }
    Ok(())
}

/// Litestream's standard output, or its standard error as the reason.
async fn litestream(replica: &ReplicaConfig, args: &[String]) -> Result<String, RestoreError> {
    let out = Command::new(&replica.litestream)
        .args(args)
        .envs(replica.credentials())
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|source| RestoreError::Program {
            program: replica.litestream.clone(),
            source,
        })?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err(RestoreError::Litestream(why.trim().to_owned()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// When the newest transaction up to `txid` was written, from the
/// replica's file list; `None` when it cannot be said.
async fn last_write(replica: &ReplicaConfig, txid: &str) -> Option<String> {
    let args = [
        "ltx".to_owned(),
        "-json".to_owned(),
        "-level".to_owned(),
        "all".to_owned(),
        replica.url.as_litestream(),
    ];
    let out = litestream(replica, &args).await.ok()?;
    let files: Vec<Ltx> = serde_json::from_str(&out).ok()?;
    files
        .into_iter()
        .filter(|f| f.max_txid.as_str() <= txid)
        .map(|f| f.timestamp)
        .max()
}
