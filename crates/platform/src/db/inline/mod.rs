//! Short SQLite reads, run at once on the calling thread.
//!
//! sqlx runs every SQLite connection on a thread of its own: a query is a
//! command sent to that thread and each row a message back, every one a
//! wake-up of a sleeping thread. For the short reads most requests make
//! (one indexed row, a page of fifty), those hand-offs cost more than
//! SQLite itself: profiled under load, `GET /preferences` spent most of its
//! time switching threads, and a page of `GET /history` 18 % in the
//! scheduler alone.
//!
//! Here such a read runs on the calling thread, on one of a few rusqlite
//! connections to the same file (the same bundled SQLite: rusqlite and sqlx
//! share libsqlite3-sys). The SQL is what SeaORM builds for the select,
//! with its values bound as sea-query binds them for sqlx, and each row is
//! decoded through the entity's own `ActiveModel`, so a model reads the
//! same either way (tests compare the two). Only reads the caller knows to
//! be short come here: a read blocks its runtime thread while it runs.
//!
//! Whatever this path cannot do exactly as sqlx would (a value type it does
//! not bind, a column type it does not decode, a database busy for a
//! moment, a select whose columns are not the entity's) is a [`Miss`], and
//! the caller reads through the pool, which also reports any real error.
//!
//! Where SeaORM's path is left, and why it is kept (docs/performance.md,
//! "Short reads on SQLite"): the short reads of usage-alerts' GET
//! /preferences and GET /history (a page written straight from the rows),
//! accounts' goal lists, and svc's GET /register/status (through
//! `grouped`), by `Db::one_short` / `Db::all_short`. Measured: GET
//! /preferences 34 % -> 52-66 % of `/healthz`, GET /history 11 % -> 22-28 %.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, IdenStatic, Iterable, Statement, TryIntoModel,
};

use super::idle::Idle;
use super::sqlite_time;

mod values;
use values::{Kind, bind};

/// At most this many idle connections are kept (more than the runtime has
/// threads is never needed: a read does not yield while it runs).
const MAX_IDLE: usize = 32;
/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 128;

/// Why a read was not done here; the caller reads through the pool.
#[derive(Debug, thiserror::Error)]
pub enum Miss {
    #[error("inline reads are off for this database")]
    Off,
    #[error("a bound value of a type not bound here: {0}")]
    Bind(&'static str),
    #[error("column {0:?} has a type not decoded here")]
    ColumnType(String),
    #[error("the select's columns are not the entity's")]
    Columns,
    #[error("column {column:?} holds a value not decoded here: {why}")]
    Decode { column: String, why: String },
    #[error("SQLite failed")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the caller could not use a row")]
    Write(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("every short-read connection stayed busy")]
    Busy,
    #[error("PostgreSQL failed")]
    Postgres(#[source] sea_orm::sqlx::Error),
}

impl Miss {
    /// The caller's own error while it used a row.
    pub fn write(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Write(Box::new(e))
    }
}

/// A small pool of connections for inline reads of one database file.
pub struct InlineReads {
    path: String,
    idle: Idle<Connection>,
}

impl std::fmt::Debug for InlineReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InlineReads")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl InlineReads {
    /// For the file a `sqlite:` URL names; `None` for an in-memory database
    /// (another connection would see another database).
    pub fn for_url(url: &str) -> Option<Self> {
        let path = super::sqlite_file(url)?;
        Some(Self {
            path: path.to_owned(),
            idle: Idle::new(MAX_IDLE),
        })
    }

    fn connect(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // Never wait: a busy database is a miss, read through the pool.
        conn.busy_timeout(std::time::Duration::ZERO)?;
        conn.pragma_update(None, "query_only", true)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(conn)
    }

    /// Closes the connections idle for `longer_than`.
    pub fn close_idle(&self, longer_than: std::time::Duration) {
        drop(self.idle.expired(longer_than));
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> Result<T, Miss>) -> Result<T, Miss> {
        let conn = match self.idle.take() {
            Some(conn) => conn,
            None => self.connect()?,
        };
        let result = f(&conn);
        // A connection left inside a transaction (it cannot be: every read
        // here is one statement) is not reused.
        if conn.is_autocommit() {
            self.idle.put(conn);
        }
        result
    }

    /// The models `stmt` (a select of `E`'s columns) reads.
    pub fn all<E>(&self, stmt: &Statement) -> Result<Vec<E::Model>, Miss>
    where
        E: EntityTrait,
        E::ActiveModel: TryIntoModel<E::Model>,
    {
        let columns: Vec<(E::Column, Kind)> = E::Column::iter()
            .map(|c| {
                let def = c.def();
                Kind::of(def.get_column_type())
                    .map(|k| (c, k))
                    .ok_or_else(|| Miss::ColumnType(c.as_str().to_owned()))
            })
            .collect::<Result<_, _>>()?;
        let mut models = Vec::new();
        self.rows::<E>(stmt, |row| {
            let mut am = <E::ActiveModel as ActiveModelTrait>::default();
            for (i, (column, kind)) in columns.iter().enumerate() {
                let miss = |why| Miss::Decode {
                    column: column.as_str().to_owned(),
                    why,
                };
                let value = kind
                    .decode(row.value(i)?)
                    .map_err(|e| miss(e.to_string()))?;
                am.try_set(*column, value)
                    .map_err(|e| miss(e.to_string()))?;
            }
            let model = am.try_into_model().map_err(|e| Miss::Decode {
                column: String::new(),
                why: e.to_string(),
            })?;
            models.push(model);
            Ok(())
        })?;
        Ok(models)
    }

    /// Runs `stmt` (a select of `E`'s columns) and hands each row to
    /// `each`, columns in the entity's order.
    pub fn rows<E: EntityTrait>(
        &self,
        stmt: &Statement,
        mut each: impl FnMut(&InlineRow<'_>) -> Result<(), Miss>,
    ) -> Result<(), Miss> {
        let params = bind(stmt.values.as_ref())?;
        self.with(|conn| {
            let mut st = conn.prepare_cached(&stmt.sql)?;
            if !same_columns::<E>(&st) {
                return Err(Miss::Columns);
            }
            let mut rows = st.query(rusqlite::params_from_iter(params))?;
            while let Some(row) = rows.next()? {
                each(&InlineRow(row))?;
            }
            Ok(())
        })
    }
}

/// Whether the statement reads exactly `E`'s columns, in order.
fn same_columns<E: EntityTrait>(st: &rusqlite::Statement<'_>) -> bool {
    st.column_count() == E::Column::iter().count()
        && st
            .column_names()
            .iter()
            .zip(E::Column::iter())
            .all(|(name, c)| *name == c.as_str())
}

/// A row of an inline read; values are borrowed from SQLite until the next
/// row. Each accessor accepts what sqlx-sqlite decodes into that type from
/// such a column and refuses the rest (a [`Miss`]).
pub struct InlineRow<'r>(&'r rusqlite::Row<'r>);

impl InlineRow<'_> {
    fn value(&self, i: usize) -> Result<ValueRef<'_>, Miss> {
        Ok(self.0.get_ref(i)?)
    }

    fn refused(&self, i: usize, what: &str) -> Miss {
        let column = self
            .0
            .as_ref()
            .column_name(i)
            .map_or_else(|_| i.to_string(), str::to_owned);
        Miss::Decode {
            column,
            why: format!("not {what}"),
        }
    }

    /// A text column.
    pub fn str(&self, i: usize) -> Result<&str, Miss> {
        match self.value(i)? {
            ValueRef::Text(t) => std::str::from_utf8(t).map_err(|_| self.refused(i, "UTF-8")),
            _ => Err(self.refused(i, "text")),
        }
    }

    /// An integer column.
    pub fn i64(&self, i: usize) -> Result<i64, Miss> {
        match self.value(i)? {
            ValueRef::Integer(n) => Ok(n),
            _ => Err(self.refused(i, "an integer")),
        }
    }

    /// A real column (an integer is converted, as SQLite does).
    pub fn f64(&self, i: usize) -> Result<f64, Miss> {
        match self.value(i)? {
            ValueRef::Real(f) => Ok(f),
            #[allow(clippy::cast_precision_loss)]
            ValueRef::Integer(n) => Ok(n as f64),
            _ => Err(self.refused(i, "a number")),
        }
    }

    /// A `DateTime<Utc>` column (text).
    pub fn datetime(&self, i: usize) -> Result<chrono::DateTime<chrono::Utc>, Miss> {
        sqlite_time::decode(self.str(i)?).ok_or_else(|| self.refused(i, "a datetime"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_are_read_inline() {
        assert!(InlineReads::for_url("sqlite:///tmp/x/keel.db").is_some());
        assert!(InlineReads::for_url("sqlite:///tmp/x/keel.db?mode=rwc").is_some());
        assert!(InlineReads::for_url("sqlite::memory:").is_none());
        assert!(InlineReads::for_url("sqlite://file.db?mode=memory").is_none());
        assert!(InlineReads::for_url("postgres://localhost/x").is_none());
    }
}
