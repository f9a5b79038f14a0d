//! Erasing deleted rows from the disk, not only from queries.
//!
//! SQLite: every connection runs with `secure_delete` on, so a deleted
//! row's bytes are overwritten with zeros in the page that held it (and a
//! freed page is zeroed). In WAL mode the log still holds the pages as
//! they were before the deletion until a checkpoint copies the new ones
//! into the database file, and a checkpoint leaves the old frames in the
//! log file until it is overwritten. [`Db::erase_freed`] runs a
//! truncating checkpoint on the writer: the database file then holds the
//! zeroed pages and the log is cut to nothing.
//!
//! PostgreSQL keeps a deleted row's tuple until VACUUM marks its space
//! free, and the bytes until that space is reused; an operator who must
//! prove erasure rewrites the tables (`VACUUM FULL`) and lets the WAL
//! archive and backups that hold them age out (docs/operations.md).

use sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement};

use super::Db;

impl Db {
    /// Makes what was deleted before this call unreadable on disk (SQLite,
    /// see the module); nothing to do on PostgreSQL. Waits for readers of
    /// older snapshots up to the busy timeout; a checkpoint that still
    /// cannot finish is logged, and the next one completes it.
    pub async fn erase_freed(&self) -> Result<(), DbErr> {
        if self.is_postgres() {
            return Ok(());
        }
        let row = self
            .writer
            .query_one_raw(Statement::from_string(
                DbBackend::Sqlite,
                "PRAGMA wal_checkpoint(TRUNCATE)",
            ))
            .await?;
        let busy: i32 = match &row {
            Some(r) => r.try_get_by_index(0)?,
            None => 0,
        };
        if busy != 0 {
            tracing::warn!(
                "erasing deleted rows from the write-ahead log: readers held it past the busy timeout; the next checkpoint completes it"
            );
        } else {
            tracing::debug!("deleted rows erased from disk (truncating checkpoint)");
        }
        Ok(())
    }
}
