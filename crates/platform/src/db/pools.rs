//! The connection pools' occupancy, for `/metrics`: per pool, the
//! connections open and idle, and the most it may open. On PostgreSQL the
//! main pool (reads and writes) and the background pool (the job worker's
//! polling); on SQLite the readers and the single writer.

use super::Db;
use sea_orm::{DatabaseConnection, DbBackend};

/// One pool's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolFigures {
    pub pool: &'static str,
    /// Connections open (in use and idle).
    pub open: u32,
    pub idle: u32,
    pub max: u32,
}

impl PoolFigures {
    pub fn in_use(&self) -> u32 {
        self.open.saturating_sub(self.idle)
    }
}

fn figures(pool: &'static str, conn: &DatabaseConnection) -> PoolFigures {
    let (open, idle, max) = match conn.get_database_backend() {
        DbBackend::Postgres => {
            let p = conn.get_postgres_connection_pool();
            (p.size(), p.num_idle(), p.options().get_max_connections())
        }
        _ => {
            let p = conn.get_sqlite_connection_pool();
            (p.size(), p.num_idle(), p.options().get_max_connections())
        }
    };
    PoolFigures {
        pool,
        open,
        idle: u32::try_from(idle).unwrap_or(open),
        max,
    }
}

impl Db {
    /// Each pool's figures now.
    pub fn pools(&self) -> Vec<PoolFigures> {
        if self.is_postgres() {
            vec![
                figures("main", &self.writer),
                figures("background", &self.background),
            ]
        } else {
            vec![
                figures("read", &self.reader),
                figures("write", &self.writer),
            ]
        }
    }

    /// Sets `keel_db_pool_connections{pool, state}` (`in_use`, `idle`) and
    /// `keel_db_pool_max_connections{pool}`.
    pub fn sample_pools(&self) {
        for p in self.pools() {
            metrics::gauge!("keel_db_pool_connections", "pool" => p.pool, "state" => "in_use")
                .set(f64::from(p.in_use()));
            metrics::gauge!("keel_db_pool_connections", "pool" => p.pool, "state" => "idle")
                .set(f64::from(p.idle));
            metrics::gauge!("keel_db_pool_max_connections", "pool" => p.pool).set(f64::from(p.max));
        }
    }
}
