//! The source is read in one snapshot: a read transaction. SQLite: a
//! deferred transaction whose first read pins what it sees, however much
//! is written meanwhile; `PRAGMA data_version` before and after says
//! whether another connection committed in between, and then the copy is
//! refused (keel was still running: what it wrote after the snapshot would
//! be lost). PostgreSQL: `REPEATABLE READ READ ONLY`; the tables' write
//! counters before and after give a warning only (they are flushed late).

use super::conn::Conn;
use super::{CopyError, sql};

/// What the source looked like before the snapshot.
pub struct Before(i64);

pub async fn begin(from: &mut Conn) -> Result<Before, CopyError> {
    let before = written(from).await?;
    let begin = if from.is_postgres() {
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    } else {
        "BEGIN"
    };
    from.exec(begin)
        .await
        .map_err(sql("starting the source's snapshot"))?;
    // The snapshot is taken at the first read.
    from.scalar_i64("SELECT COUNT(*) FROM keel_migrations")
        .await
        .map_err(sql("starting the source's snapshot"))?;
    Ok(Before(before))
}

pub async fn end(from: &mut Conn, before: Before) -> Result<(), CopyError> {
    from.exec("COMMIT")
        .await
        .map_err(sql("ending the source's snapshot"))?;
    let after = written(from).await?;
    if after == before.0 {
        return Ok(());
    }
    if from.is_postgres() {
        tracing::warn!(
            "the source's tables were written while they were copied: the copy holds them as they were when it began; stop keel before copying, or those writes are not in the target"
        );
        Ok(())
    } else {
        Err(CopyError::SourceWritten)
    }
}

/// SQLite: `data_version` (changes when another connection commits).
/// PostgreSQL: rows inserted, updated and deleted in this schema's tables.
async fn written(from: &mut Conn) -> Result<i64, CopyError> {
    let probe = if from.is_postgres() {
        from.exec("SELECT pg_stat_clear_snapshot()")
            .await
            .map_err(sql("reading the source's write counters"))?;
        "SELECT COALESCE(SUM(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint \
         FROM pg_stat_user_tables WHERE schemaname = current_schema()"
    } else {
        "PRAGMA data_version"
    };
    Ok(from
        .scalar_i64(probe)
        .await
        .map_err(sql("reading the source's write counters"))?
        .unwrap_or(0))
}
