//! SQLite's write-ahead log copied into the database file off the write
//! path. By default the connection that commits a write past 1,000 pages of
//! log runs the checkpoint itself, fsync included, inside that request: a
//! few milliseconds every few hundred milliseconds under a steady stream of
//! writes (the latency benchmark's POST /event tail). keel's writer does so
//! only past `WRITER_AUTOCHECKPOINT_PAGES` (32 MiB); a background task runs a
//! PASSIVE checkpoint on a reader connection several times a second, which
//! neither waits for nor blocks the writer, and the writer starts the log
//! over once a checkpoint has copied all of it.

use std::time::Duration;

use sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement};
use tokio_util::sync::CancellationToken;

use super::Db;

/// How often the log is checkpointed. A checkpoint with nothing to copy
/// costs a few microseconds.
const EVERY: Duration = Duration::from_millis(250);

impl Db {
    /// Checkpoints the write-ahead log every [`EVERY`] until `stop`
    /// (SQLite; returns at once on PostgreSQL).
    pub async fn checkpoint_until(self, stop: CancellationToken) {
        if self.is_postgres() {
            return;
        }
        let mut every = tokio::time::interval(EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = every.tick() => {}
            }
            if let Err(e) = self.checkpoint().await {
                tracing::warn!(error = %e, "checkpointing the write-ahead log failed");
            }
        }
    }

    /// One PASSIVE checkpoint: copies what no reader still needs.
    async fn checkpoint(&self) -> Result<(), DbErr> {
        self.reader
            .execute_raw(Statement::from_string(
                DbBackend::Sqlite,
                "PRAGMA wal_checkpoint(PASSIVE)",
            ))
            .await?;
        Ok(())
    }
}
