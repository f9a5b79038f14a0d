//! Where the SQLite database is replicated, and Litestream's configuration
//! for it.
//!
//! keel replicates its embedded database with Litestream, run as keel's
//! child process (see [`super::replicate`]): Litestream copies each change
//! of the write-ahead log to the replica within the sync interval and
//! takes snapshots, and `litestream restore` (wrapped by `keel restore`)
//! brings back the newest state or the state at a time. docs/operations.md
//! says why Litestream rather than a replicator of keel's own.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::{ConfigError, Secret, Source};

/// The replica: `s3://bucket/path?endpoint=...&region=...` (AWS S3,
/// Cloudflare R2, Backblaze B2, MinIO) or `file:///a/mounted/directory`.
pub const REPLICA_URL: &str = "KEEL_REPLICA_URL";
/// Writes acknowledged to clients are at risk for at most this long.
pub const REPLICA_SYNC_MS: &str = "KEEL_REPLICA_SYNC_MS";
/// How often a full snapshot is written.
pub const REPLICA_SNAPSHOT_SECS: &str = "KEEL_REPLICA_SNAPSHOT_SECS";
/// How long snapshots and the log between them are kept.
pub const REPLICA_RETENTION_SECS: &str = "KEEL_REPLICA_RETENTION_SECS";
/// The Litestream program (default: `litestream` on the `PATH`).
pub const LITESTREAM_BIN: &str = "KEEL_LITESTREAM_BIN";
/// S3 credentials, under the names every S3 tool reads.
pub const ACCESS_KEY_ID: &str = "AWS_ACCESS_KEY_ID";
pub const SECRET_ACCESS_KEY: &str = "AWS_SECRET_ACCESS_KEY";

/// How the database is replicated.
#[derive(Debug, Clone)]
pub struct ReplicaConfig {
    pub url: ReplicaUrl,
    pub sync: Duration,
    pub snapshot: Duration,
    pub retention: Duration,
    pub litestream: PathBuf,
    pub access_key_id: Option<Secret>,
    pub secret_access_key: Option<Secret>,
}

/// A replica's URL, checked: an S3 bucket or a local directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplicaUrl {
    S3(String),
    Dir(PathBuf),
}

impl ReplicaUrl {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        if let Some(rest) = raw.strip_prefix("s3://") {
            let bucket = rest.split(['/', '?']).next().unwrap_or_default();
            if bucket.is_empty() {
                return Err("an s3:// URL names its bucket: s3://bucket/path".to_owned());
            }
            return Ok(Self::S3(raw.to_owned()));
        }
        if let Some(path) = raw.strip_prefix("file://") {
            let path = Path::new(path);
            if !path.is_absolute() {
                return Err(
                    "a file:// URL names an absolute directory: file:///backups/keel".to_owned(),
                );
            }
            return Ok(Self::Dir(path.to_owned()));
        }
        Err("expected s3://bucket/path or file:///a/directory".to_owned())
    }

    /// As Litestream reads it on its command line.
    pub fn as_litestream(&self) -> String {
        match self {
            Self::S3(url) => url.clone(),
            Self::Dir(path) => format!("file://{}", path.display()),
        }
    }

    /// Where it is, for a log line: no query (it may name an endpoint's
    /// options), never credentials (keel takes none in the URL).
    pub fn shown(&self) -> String {
        let url = self.as_litestream();
        url.split('?').next().unwrap_or_default().to_owned()
    }
}

impl ReplicaConfig {
    /// The replica configured, or `None` when `KEEL_REPLICA_URL` is unset.
    pub fn from_source(src: &Source) -> Result<Option<Self>, ConfigError> {
        let Some(raw) = src.get(REPLICA_URL) else {
            return Ok(None);
        };
        let url = ReplicaUrl::parse(raw).map_err(|e| ConfigError::invalid(REPLICA_URL, e))?;
        let sync = src.millis_or(REPLICA_SYNC_MS, Duration::from_secs(1))?;
        if sync.is_zero() {
            return Err(ConfigError::invalid(REPLICA_SYNC_MS, "must be at least 1"));
        }
        Ok(Some(Self {
            url,
            sync,
            snapshot: src.secs_or(REPLICA_SNAPSHOT_SECS, Duration::from_secs(3600))?,
            retention: src.secs_or(REPLICA_RETENTION_SECS, Duration::from_secs(24 * 3600))?,
            litestream: PathBuf::from(src.string_or(LITESTREAM_BIN, "litestream")),
            access_key_id: src.secret(ACCESS_KEY_ID),
            secret_access_key: src.secret(SECRET_ACCESS_KEY),
        }))
    }

    /// The credentials for Litestream's environment (never its file).
    pub fn credentials(&self) -> Vec<(&'static str, &str)> {
        let mut env = Vec::new();
        if let Some(id) = &self.access_key_id {
            env.push((ACCESS_KEY_ID, id.expose()));
        }
        if let Some(key) = &self.secret_access_key {
            env.push((SECRET_ACCESS_KEY, key.expose()));
        }
        env
    }

    /// Litestream's configuration replicating `db` as this says, with its
    /// control socket at `socket` when given. Log files already folded
    /// into a snapshot's chain are kept no longer than the retention
    /// (Litestream's own default, five minutes, when that is shorter), so
    /// the retention bounds how long a deleted row lives in the replica
    /// (docs/operations.md).
    pub fn litestream_yaml(&self, db: &Path, socket: Option<&Path>) -> String {
        let replica = match &self.url {
            ReplicaUrl::S3(url) => format!("      url: {}\n", quoted(url)),
            ReplicaUrl::Dir(path) => format!(
                "      type: file\n      path: {}\n",
                quoted(&path.display().to_string())
            ),
        };
        let socket = socket.map_or_else(String::new, |path| {
            format!(
                "socket:\n  enabled: true\n  path: {}\n",
                quoted(&path.display().to_string())
            )
        });
        format!(
            "# Written by keel from its KEEL_REPLICA_* settings; edits are lost.\n\
             {socket}snapshot:\n  interval: {}\n  retention: {}\n\
             l0-retention: {}\n\
             dbs:\n  - path: {}\n    replica:\n{replica}      sync-interval: {}\n",
            go_duration(self.snapshot),
            go_duration(self.retention),
            go_duration(self.retention.min(Duration::from_secs(300))),
            quoted(&db.display().to_string()),
            go_duration(self.sync),
        )
    }
}

/// A YAML string in double quotes.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A duration as Go writes one (`1500ms`, `30s`).
fn go_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_urls_are_an_s3_bucket_or_an_absolute_directory() {
        assert!(matches!(
            ReplicaUrl::parse("s3://b/keel?endpoint=http://x"),
            Ok(ReplicaUrl::S3(_))
        ));
        assert_eq!(
            ReplicaUrl::parse("file:///backups/keel"),
            Ok(ReplicaUrl::Dir(PathBuf::from("/backups/keel")))
        );
        assert!(ReplicaUrl::parse("s3://").is_err());
        assert!(ReplicaUrl::parse("file://relative").is_err());
        assert!(ReplicaUrl::parse("ftp://host/x").is_err());
        let shown = ReplicaUrl::parse("s3://b/keel?endpoint=http://x").map(|u| u.shown());
        assert_eq!(shown.ok().as_deref(), Some("s3://b/keel"));
    }

    #[test]
    fn litestreams_configuration_says_the_intervals_and_holds_no_secret() {
        let src = Source::from_pairs([
            (REPLICA_URL, "s3://b/keel"),
            (REPLICA_SYNC_MS, "1500"),
            (SECRET_ACCESS_KEY, "hush"),
        ]);
        let cfg = ReplicaConfig::from_source(&src).ok().flatten();
        let sock = Path::new("/data/litestream.sock");
        let yaml = cfg.map(|c| c.litestream_yaml(Path::new("/data/keel.db"), Some(sock)));
        let yaml = yaml.unwrap_or_default();
        assert!(yaml.contains("sync-interval: 1500ms"), "{yaml}");
        assert!(yaml.contains("interval: 3600s") && yaml.contains("retention: 86400s"));
        assert!(yaml.contains("path: \"/data/keel.db\""));
        assert!(yaml.contains("enabled: true\n  path: \"/data/litestream.sock\""));
        assert!(yaml.contains("l0-retention: 300s"), "{yaml}");
        assert!(!yaml.contains("hush"));
    }
}
