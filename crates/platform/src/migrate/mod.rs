//! Forward-only, numbered migrations per component, recorded in
//! `keel_migrations`. One migrator at a time: PostgreSQL takes a
//! transaction-level advisory lock (others wait, then give up after a bound);
//! SQLite takes an exclusive transaction. Each migration runs in a savepoint,
//! so a failed one leaves nothing behind.

use std::collections::BTreeSet;
use std::time::Duration;

use sea_orm::sea_query::{ColumnDef, Expr, Index, Query, Table};
use sea_orm::{
    ConnectionTrait, DatabaseTransaction, DbBackend, DbErr, Statement, TransactionTrait,
};

use crate::config::MigrationConfig;
use crate::db::Db;

mod lock;
pub mod spec;

pub use lock::advisory_lock_key;
use lock::lock;

const HISTORY: &str = "keel_migrations";

/// One schema change. `up` returns the statements for the given backend.
pub struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub up: fn(DbBackend) -> Vec<Statement>,
}

/// The migrations of one component (a service crate, or the platform),
/// and the tables they make (its entities: what `keel db copy` copies).
pub struct MigrationSet {
    pub component: &'static str,
    pub migrations: &'static [Migration],
    pub tables: fn() -> Vec<spec::TableSpec>,
}

/// For a component whose tables are not copied (quotebot, tests).
pub fn no_tables() -> Vec<spec::TableSpec> {
    Vec::new()
}

/// What a run applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub component: String,
    pub version: u32,
    pub name: String,
}

#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error("gave up waiting for the migration lock after {0:?}; another migrator holds it")]
    LockTimeout(Duration),
    #[error(
        "migration {component} {version:04} ({name}) failed and was rolled back{}: {source}",
        sqlstate_note(source)
    )]
    Failed {
        component: &'static str,
        version: u32,
        name: &'static str,
        source: DbErr,
    },
    #[error("database error while migrating{note}, rolled back: {0}", note = sqlstate_note(.0))]
    Db(#[from] DbErr),
}

/// The SQLSTATE of a database error, if the database sent one (e.g. 55P03:
/// a lock not obtained within `lock_timeout`).
pub fn sqlstate(e: &DbErr) -> Option<String> {
    let sqlx = match e {
        DbErr::Query(sea_orm::RuntimeErr::SqlxError(e))
        | DbErr::Exec(sea_orm::RuntimeErr::SqlxError(e))
        | DbErr::Conn(sea_orm::RuntimeErr::SqlxError(e)) => e,
        _ => return None,
    };
    sqlx.as_database_error()
        .and_then(|d| d.code())
        .map(|c| c.into_owned())
}

fn sqlstate_note(e: &DbErr) -> String {
    sqlstate(e).map_or_else(String::new, |c| format!(" (SQLSTATE {c})"))
}

/// Applies every pending migration of `sets`, in order.
pub async fn run(
    db: &Db,
    cfg: &MigrationConfig,
    sets: &[&MigrationSet],
) -> Result<Vec<Applied>, MigrateError> {
    tracing::info!("Running database migrations...");
    let txn = lock(db, cfg).await?;
    txn.execute(&history_table()).await?;
    let done = applied_versions(&txn).await?;
    warn_unknown(&done, sets);
    let mut applied = Vec::new();
    for set in sets {
        for m in set.migrations {
            if done.contains(&(set.component.to_owned(), m.version)) {
                continue;
            }
            if let Err(source) = apply(&txn, set.component, m).await {
                txn.commit().await?;
                return Err(MigrateError::Failed {
                    component: set.component,
                    version: m.version,
                    name: m.name,
                    source,
                });
            }
            tracing::info!(
                component = set.component,
                version = m.version,
                name = m.name,
                "applied migration"
            );
            applied.push(Applied {
                component: set.component.to_owned(),
                version: m.version,
                name: m.name.to_owned(),
            });
        }
    }
    txn.commit().await?;
    tracing::info!(applied = applied.len(), "Migrations complete.");
    Ok(applied)
}

/// Records that `version` of `set` is applied without running it (a
/// baseline: the schema is already that migration's, made by other means).
pub async fn mark_applied(db: &Db, set: &MigrationSet, version: u32) -> Result<(), MigrateError> {
    let txn = db.write().begin().await?;
    mark_applied_in(&txn, set, version).await?;
    txn.commit().await?;
    Ok(())
}

/// [`mark_applied`] inside the caller's transaction (a rebuild that must
/// record its version in the same commit).
pub async fn mark_applied_in(
    txn: &DatabaseTransaction,
    set: &MigrationSet,
    version: u32,
) -> Result<(), MigrateError> {
    let Some(m) = set.migrations.iter().find(|m| m.version == version) else {
        return Err(MigrateError::Db(DbErr::Custom(format!(
            "{} has no migration {version:04}",
            set.component
        ))));
    };
    txn.execute(&history_table()).await?;
    let insert = Query::insert()
        .into_table(HISTORY)
        .columns(["component", "version", "name", "applied_at"])
        .values_panic([
            set.component.into(),
            i64::from(m.version).into(),
            m.name.into(),
            chrono::Utc::now().into(),
        ])
        .to_owned();
    txn.execute(&insert).await?;
    Ok(())
}

async fn apply(txn: &DatabaseTransaction, component: &str, m: &Migration) -> Result<(), DbErr> {
    let savepoint = txn.begin().await?;
    let result = async {
        for stmt in (m.up)(txn.get_database_backend()) {
            savepoint.execute_raw(stmt).await?;
        }
        let insert = Query::insert()
            .into_table(HISTORY)
            .columns(["component", "version", "name", "applied_at"])
            .values_panic([
                component.into(),
                i64::from(m.version).into(),
                m.name.into(),
                chrono::Utc::now().into(),
            ])
            .to_owned();
        savepoint.execute(&insert).await?;
        Ok::<(), DbErr>(())
    }
    .await;
    match result {
        Ok(()) => savepoint.commit().await,
        Err(e) => {
            savepoint.rollback().await?;
            Err(e)
        }
    }
}

/// Each component's newest migration applied here: (component, version,
/// when), by component.
pub async fn newest(db: &Db) -> Result<Vec<(String, i64, chrono::DateTime<chrono::Utc>)>, DbErr> {
    use sea_orm::ExprTrait;
    use sea_orm::sea_query::Alias;
    let q = Query::select()
        .column(Alias::new("component"))
        .expr_as(
            Expr::col(Alias::new("version")).max(),
            Alias::new("version"),
        )
        .expr_as(
            Expr::col(Alias::new("applied_at")).max(),
            Alias::new("applied_at"),
        )
        .from(Alias::new(HISTORY))
        .group_by_col(Alias::new("component"))
        .order_by(Alias::new("component"), sea_orm::Order::Asc)
        .to_owned();
    let conn = db.read();
    let rows = conn.query_all(&q).await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("", "component")?,
                r.try_get("", "version")?,
                r.try_get("", "applied_at")?,
            ))
        })
        .collect()
}

fn history_table() -> sea_orm::sea_query::TableCreateStatement {
    Table::create()
        .table(HISTORY)
        .if_not_exists()
        .col(ColumnDef::new("component").string_len(64).not_null())
        .col(ColumnDef::new("version").big_integer().not_null())
        .col(ColumnDef::new("name").string_len(200).not_null())
        .col(
            ColumnDef::new("applied_at")
                .timestamp_with_time_zone()
                .not_null(),
        )
        .primary_key(Index::create().col("component").col("version"))
        .to_owned()
}

async fn applied_versions(txn: &DatabaseTransaction) -> Result<BTreeSet<(String, u32)>, DbErr> {
    let select = Query::select()
        .columns(["component", "version"])
        .from(HISTORY)
        .to_owned();
    let rows = txn.query_all(&select).await?;
    rows.iter()
        .map(|r| {
            let component: String = r.try_get("", "component")?;
            let version: i64 = r.try_get("", "version")?;
            let version = u32::try_from(version)
                .map_err(|_| DbErr::Custom(format!("bad migration version {version}")))?;
            Ok((component, version))
        })
        .collect()
}

fn warn_unknown(done: &BTreeSet<(String, u32)>, sets: &[&MigrationSet]) {
    for (component, version) in done {
        let Some(set) = sets.iter().find(|s| s.component == component) else {
            continue;
        };
        if !set.migrations.iter().any(|m| m.version == *version) {
            tracing::warn!(
                component = %component,
                version,
                "the database has a migration this keel does not know (a newer release applied it)"
            );
        }
    }
}

/// Builds each statement for `backend`.
pub fn build_all(backend: DbBackend, stmts: &[&dyn StatementBuild]) -> Vec<Statement> {
    stmts.iter().map(|s| s.build_for(backend)).collect()
}

/// Object-safe wrapper over SeaORM's `StatementBuilder`.
pub trait StatementBuild {
    fn build_for(&self, backend: DbBackend) -> Statement;
}

impl<T: sea_orm::StatementBuilder> StatementBuild for T {
    fn build_for(&self, backend: DbBackend) -> Statement {
        backend.build(self)
    }
}

/// `DEFAULT CURRENT_TIMESTAMP` for timestamp columns.
pub fn now_default() -> Expr {
    Expr::current_timestamp()
}

/// Column definitions every service's migrations use, so each table says
/// what a column is (a timestamp, a bounded string) the same way.
pub mod col {
    use sea_orm::sea_query::ColumnDef;

    /// `varchar(len) NOT NULL`.
    pub fn string(name: &'static str, len: u32) -> ColumnDef {
        ColumnDef::new(name).string_len(len).not_null().to_owned()
    }

    /// `varchar(len) NULL`.
    pub fn string_null(name: &'static str, len: u32) -> ColumnDef {
        ColumnDef::new(name).string_len(len).null().to_owned()
    }

    /// `timestamp with time zone NOT NULL` (RFC 3339 text on SQLite).
    pub fn timestamp(name: &'static str) -> ColumnDef {
        ColumnDef::new(name)
            .timestamp_with_time_zone()
            .not_null()
            .to_owned()
    }

    /// `timestamp with time zone NULL`.
    pub fn timestamp_null(name: &'static str) -> ColumnDef {
        ColumnDef::new(name)
            .timestamp_with_time_zone()
            .null()
            .to_owned()
    }

    /// `bigint NOT NULL`.
    pub fn big(name: &'static str) -> ColumnDef {
        ColumnDef::new(name).big_integer().not_null().to_owned()
    }

    /// `bigint` auto-increment primary key.
    pub fn serial(name: &'static str) -> ColumnDef {
        ColumnDef::new(name)
            .big_integer()
            .not_null()
            .auto_increment()
            .primary_key()
            .to_owned()
    }
}
