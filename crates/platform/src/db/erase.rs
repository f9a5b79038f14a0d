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

use std::time::Duration;

use sea_orm::DbErr;
use sea_orm::sqlx::{self, AssertSqlSafe};

use super::Db;

/// How long one try may wait for readers while it holds the write lock:
/// every other write waits at most this long behind it.
const TRY_WAIT_MS: u64 = 100;
/// The pause between tries, the write lock released, so writes go on.
const PAUSE: Duration = Duration::from_millis(100);
/// How many tries before the erasure is left to the next one: about five
/// seconds in all, the busy timeout's default.
const TRIES: u32 = 25;

impl Db {
    /// Makes what was deleted before this call unreadable on disk (SQLite,
    /// see the module); nothing to do on PostgreSQL. A truncating
    /// checkpoint holds the write lock while it waits for readers of older
    /// snapshots (Litestream reads the log), so each try waits only a
    /// moment and the writer is released between tries; a checkpoint that
    /// still cannot finish is logged, and the next one completes it.
    pub async fn erase_freed(&self) -> Result<(), DbErr> {
        if self.is_postgres() {
            return Ok(());
        }
        for _ in 0..TRIES {
            if self.try_truncate().await.map_err(db_err)? {
                tracing::debug!("deleted rows erased from disk (truncating checkpoint)");
                return Ok(());
            }
            tokio::time::sleep(PAUSE).await;
        }
        tracing::warn!(
            "erasing deleted rows from the write-ahead log: readers held it past the busy timeout; the next checkpoint completes it"
        );
        Ok(())
    }

    /// One truncating checkpoint on the writer with a short busy timeout:
    /// whether it completed. The writer's own busy timeout is put back
    /// after; a connection where that fails is closed, not reused.
    async fn try_truncate(&self) -> Result<bool, sqlx::Error> {
        let pool = self.writer.get_sqlite_connection_pool();
        let mut conn = pool.acquire().await?;
        let before: i64 = sqlx::query_scalar("PRAGMA busy_timeout")
            .fetch_one(&mut *conn)
            .await?;
        sqlx::query(AssertSqlSafe(format!(
            "PRAGMA busy_timeout = {TRY_WAIT_MS}"
        )))
        .execute(&mut *conn)
        .await?;
        let done = sqlx::query_scalar::<_, i64>("PRAGMA wal_checkpoint(TRUNCATE)")
            .fetch_one(&mut *conn)
            .await;
        let restored = sqlx::query(AssertSqlSafe(format!("PRAGMA busy_timeout = {before}")))
            .execute(&mut *conn)
            .await;
        if restored.is_err() {
            conn.close_on_drop();
        }
        restored?;
        Ok(done? == 0)
    }
}

fn db_err(e: sqlx::Error) -> DbErr {
    DbErr::Exec(sea_orm::RuntimeErr::SqlxError(std::sync::Arc::new(e)))
}
