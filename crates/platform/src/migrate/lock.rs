//! The one migration lock: a transaction-level advisory lock on PostgreSQL
//! (others wait, then give up after a bound, naming the holder), an
//! exclusive transaction on SQLite.

use std::time::{Duration, Instant};

use sea_orm::{
    ConnectionTrait, DatabaseTransaction, DbBackend, DbErr, Statement, TransactionTrait, Value,
};

use super::MigrateError;
use crate::config::MigrationConfig;
use crate::db::Db;

/// Begins the migration transaction, holding the one migration lock.
pub(super) async fn lock(
    db: &Db,
    cfg: &MigrationConfig,
) -> Result<DatabaseTransaction, MigrateError> {
    if db.is_postgres() {
        lock_postgres(db, cfg).await
    } else {
        lock_sqlite(db, cfg).await
    }
}

async fn lock_postgres(
    db: &Db,
    cfg: &MigrationConfig,
) -> Result<DatabaseTransaction, MigrateError> {
    let txn = db.write().begin().await?;
    let timeout_ms = cfg.table_lock_timeout.as_millis();
    // No statement limit for a migration (an index built on a large table
    // may take minutes); its table locks are bounded instead.
    txn.execute_unprepared("SET LOCAL statement_timeout = 0")
        .await?;
    txn.execute_unprepared(&format!("SET LOCAL lock_timeout = {timeout_ms}"))
        .await?;
    let key = advisory_key(&txn).await?;
    let started = Instant::now();
    let mut last_log: Option<Instant> = None;
    loop {
        let got = txn
            .query_one_raw(Statement::from_sql_and_values(
                DbBackend::Postgres,
                "SELECT pg_try_advisory_xact_lock($1) AS got",
                [Value::from(key)],
            ))
            .await?
            .map(|r| r.try_get::<bool>("", "got"))
            .transpose()?
            .unwrap_or(false);
        if got {
            return Ok(txn);
        }
        if started.elapsed() >= cfg.lock_wait {
            txn.rollback().await?;
            return Err(MigrateError::LockTimeout(cfg.lock_wait));
        }
        if last_log.is_none_or(|t| t.elapsed() >= Duration::from_secs(10)) {
            let pid = lock_holder(db, key).await;
            tracing::info!("Waiting for the migration lock held by backend pid {pid}...");
            last_log = Some(Instant::now());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The lock is per schema, so separate keel installations in one database
/// (and parallel test schemas) do not wait on each other.
async fn advisory_key(txn: &DatabaseTransaction) -> Result<i64, DbErr> {
    let schema: String = txn
        .query_one_raw(Statement::from_string(
            DbBackend::Postgres,
            "SELECT current_schema() AS s",
        ))
        .await?
        .map(|r| r.try_get("", "s"))
        .transpose()?
        .unwrap_or_default();
    Ok(advisory_lock_key(&schema))
}

/// The advisory lock key migrators of `schema` take.
pub fn advisory_lock_key(schema: &str) -> i64 {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("keel-migrations:{schema}").as_bytes());
    let mut bytes = [0u8; 4];
    bytes.copy_from_slice(&digest[..4]);
    // 31 bits: pg_locks shows it as objid with classid 0.
    i64::from(u32::from_be_bytes(bytes) & 0x7fff_ffff)
}

async fn lock_holder(db: &Db, key: i64) -> String {
    let stmt = Statement::from_sql_and_values(
        DbBackend::Postgres,
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 \
         AND objid = $1::bigint::oid AND objsubid = 1 AND granted LIMIT 1",
        [Value::from(key)],
    );
    match db.read().query_one_raw(stmt).await {
        Ok(Some(row)) => row
            .try_get::<i32>("", "pid")
            .map_or_else(|_| "?".to_owned(), |p| p.to_string()),
        _ => "?".to_owned(),
    }
}

async fn lock_sqlite(db: &Db, cfg: &MigrationConfig) -> Result<DatabaseTransaction, MigrateError> {
    let started = Instant::now();
    let mut logged = false;
    loop {
        match db.begin_exclusive().await {
            Ok(txn) => return Ok(txn),
            Err(e) if is_busy(&e) => {
                if started.elapsed() >= cfg.lock_wait {
                    return Err(MigrateError::LockTimeout(cfg.lock_wait));
                }
                if !logged {
                    tracing::info!("Waiting for the migration lock held by another process...");
                    logged = true;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

fn is_busy(e: &DbErr) -> bool {
    let text = e.to_string();
    text.contains("database is locked") || text.contains("SQLITE_BUSY")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_differ_per_schema_and_fit_31_bits() {
        let a = advisory_lock_key("public");
        let b = advisory_lock_key("t_123");
        assert_ne!(a, b);
        assert!((0..=i64::from(i32::MAX)).contains(&a));
    }
}
