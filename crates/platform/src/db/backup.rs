//! `keel backup`: a consistent copy of the SQLite database, taken while
//! keel serves and writes. SQLite's `VACUUM INTO` reads one snapshot of the
//! database (a read transaction: writers go on, in WAL mode) and writes it
//! compacted to a new file, so the copy holds every transaction committed
//! before it began and none half-written; copying the file (and its WAL)
//! by hand does not give that. The copy is then checked with
//! `PRAGMA integrity_check`. PostgreSQL has its own tool for this
//! (`pg_dump`), which keel does not replace.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use crate::config::DatabaseUrl;

/// A backup made.
#[derive(Debug)]
pub struct Backup {
    pub path: PathBuf,
    pub bytes: u64,
    pub took: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error(
        "the database is PostgreSQL: back it up with pg_dump, e.g. pg_dump --format=custom --file=keel.dump \"$DATABASE_URL\", and restore with pg_restore --clean --if-exists --dbname=\"$DATABASE_URL\" keel.dump (keel stopped)"
    )]
    Postgres,
    #[error("the database is in memory: there is nothing to back up")]
    InMemory,
    #[error("{0} exists already: name a new file")]
    Exists(PathBuf),
    #[error("the database could not be copied: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the copy failed its integrity check: {0}")]
    Damaged(String),
    #[error("the copy could not be read: {0}")]
    Io(#[from] std::io::Error),
}

/// Copies the database `url` names to the new file `to`, checks the copy.
pub fn backup(url: &DatabaseUrl, to: &Path) -> Result<Backup, BackupError> {
    let DatabaseUrl::Sqlite(url) = url else {
        return Err(BackupError::Postgres);
    };
    let from = super::sqlite_file(url).ok_or(BackupError::InMemory)?;
    if to.exists() {
        return Err(BackupError::Exists(to.to_owned()));
    }
    let started = Instant::now();
    let source = Connection::open_with_flags(from, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    // Wait for a writer's checkpoint rather than fail at once.
    source.busy_timeout(Duration::from_secs(30))?;
    source.execute("VACUUM INTO ?1", [to.to_string_lossy()])?;
    drop(source);
    let copy = Connection::open_with_flags(to, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let verdict: String = copy.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if verdict != "ok" {
        return Err(BackupError::Damaged(verdict));
    }
    Ok(Backup {
        path: to.to_owned(),
        bytes: std::fs::metadata(to)?.len(),
        took: started.elapsed(),
    })
}
