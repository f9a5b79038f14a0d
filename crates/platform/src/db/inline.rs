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

use std::sync::{Mutex, PoisonError};

use rusqlite::types::{Value as Sql, ValueRef};
use rusqlite::{Connection, OpenFlags};
use sea_orm::sea_query::{ColumnType, Value};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, IdenStatic, Iterable, Statement, TryIntoModel,
    Values,
};

use super::sqlite_time;

/// At most this many idle connections are kept (more than the runtime has
/// threads is never needed: a read does not yield while it runs).
const MAX_IDLE: usize = 32;
/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 128;

/// Why a read was not done here; the caller reads through the pool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    #[error("SQLite: {0}")]
    Sqlite(String),
    #[error("the caller could not use a row: {0}")]
    Write(String),
}

impl From<rusqlite::Error> for Miss {
    fn from(e: rusqlite::Error) -> Self {
        Self::Sqlite(e.to_string())
    }
}

/// A small pool of connections for inline reads of one database file.
pub struct InlineReads {
    path: String,
    idle: Mutex<Vec<Connection>>,
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
        let rest = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))?;
        let path = rest.split('?').next().unwrap_or_default();
        if path.is_empty() || path.contains(":memory:") || rest.contains("mode=memory") {
            return None;
        }
        Some(Self {
            path: path.to_owned(),
            idle: Mutex::new(Vec::new()),
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

    fn with<T>(&self, f: impl FnOnce(&Connection) -> Result<T, Miss>) -> Result<T, Miss> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.connect()?,
        };
        let result = f(&conn);
        // A connection left inside a transaction (it cannot be: every read
        // here is one statement) is not reused.
        if conn.is_autocommit() {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            if idle.len() < MAX_IDLE {
                idle.push(conn);
            }
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
        let params = bind(stmt.values.as_ref())?;
        self.with(|conn| {
            let mut st = conn.prepare_cached(&stmt.sql)?;
            if !same_columns::<E>(&st) {
                return Err(Miss::Columns);
            }
            let mut rows = st.query(rusqlite::params_from_iter(params))?;
            let mut models = Vec::new();
            while let Some(row) = rows.next()? {
                let mut am = <E::ActiveModel as ActiveModelTrait>::default();
                for (i, (column, kind)) in columns.iter().enumerate() {
                    let value = kind.decode(row.get_ref(i)?).map_err(|why| Miss::Decode {
                        column: column.as_str().to_owned(),
                        why,
                    })?;
                    am.try_set(*column, value).map_err(|e| Miss::Decode {
                        column: column.as_str().to_owned(),
                        why: e.to_string(),
                    })?;
                }
                let model = am.try_into_model().map_err(|e| Miss::Decode {
                    column: String::new(),
                    why: e.to_string(),
                })?;
                models.push(model);
            }
            Ok(models)
        })
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

/// The values, bound as sea-query binds them for sqlx-sqlite.
fn bind(values: Option<&Values>) -> Result<Vec<Sql>, Miss> {
    let Some(values) = values else {
        return Ok(Vec::new());
    };
    values.0.iter().map(bind_one).collect()
}

fn bind_one(v: &Value) -> Result<Sql, Miss> {
    fn int(i: Option<i64>) -> Sql {
        i.map_or(Sql::Null, Sql::Integer)
    }
    Ok(match v {
        Value::Bool(b) => int(b.map(i64::from)),
        Value::TinyInt(i) => int(i.map(i64::from)),
        Value::SmallInt(i) => int(i.map(i64::from)),
        Value::Int(i) => int(i.map(i64::from)),
        Value::BigInt(i) => int(*i),
        Value::TinyUnsigned(i) => int(i.map(i64::from)),
        Value::SmallUnsigned(i) => int(i.map(i64::from)),
        Value::Unsigned(i) => int(i.map(i64::from)),
        Value::BigUnsigned(i) => match i {
            None => Sql::Null,
            Some(i) => Sql::Integer(i64::try_from(*i).map_err(|_| Miss::Bind("u64 above i64"))?),
        },
        Value::Float(f) => f.map_or(Sql::Null, |f| Sql::Real(f64::from(f))),
        Value::Double(f) => f.map_or(Sql::Null, Sql::Real),
        Value::String(s) => s.as_ref().map_or(Sql::Null, |s| Sql::Text(s.clone())),
        Value::Char(c) => c.map_or(Sql::Null, |c| Sql::Text(c.to_string())),
        Value::Bytes(b) => b.as_ref().map_or(Sql::Null, |b| Sql::Blob(b.clone())),
        Value::ChronoDateTimeUtc(t) => t
            .as_ref()
            .map_or(Sql::Null, |t| Sql::Text(sqlite_time::encode(t))),
        _ => return Err(Miss::Bind("other")),
    })
}

/// How a column's values become SeaORM values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    Bool,
    Float,
    Double,
    DateTimeUtc,
    Bytes,
}

impl Kind {
    /// The kind of the Rust type SeaORM derives `ct` from.
    fn of(ct: &ColumnType) -> Option<Self> {
        Some(match ct {
            ColumnType::Char(_) | ColumnType::String(_) | ColumnType::Text => Self::Text,
            ColumnType::TinyInteger => Self::TinyInt,
            ColumnType::SmallInteger => Self::SmallInt,
            ColumnType::Integer => Self::Int,
            ColumnType::BigInteger => Self::BigInt,
            ColumnType::Boolean => Self::Bool,
            ColumnType::Float => Self::Float,
            ColumnType::Double => Self::Double,
            ColumnType::TimestampWithTimeZone => Self::DateTimeUtc,
            ColumnType::Blob | ColumnType::Binary(_) | ColumnType::VarBinary(_) => Self::Bytes,
            _ => return None,
        })
    }

    /// The value as sqlx-sqlite decodes it into the column's Rust type;
    /// anything else (a stored value of another class) is refused.
    fn decode(self, v: ValueRef<'_>) -> Result<Value, String> {
        let refused = || format!("{:?} for {self:?}", v.data_type());
        let int = |v: ValueRef<'_>| match v {
            ValueRef::Integer(i) => Ok(i),
            _ => Err(refused()),
        };
        if matches!(v, ValueRef::Null) {
            return Ok(self.null());
        }
        Ok(match self {
            Self::Text => match v {
                ValueRef::Text(t) => Value::String(Some(
                    std::str::from_utf8(t)
                        .map_err(|e| e.to_string())?
                        .to_owned(),
                )),
                _ => return Err(refused()),
            },
            Self::TinyInt => Value::TinyInt(Some(i8::try_from(int(v)?).map_err(|_| refused())?)),
            Self::SmallInt => Value::SmallInt(Some(i16::try_from(int(v)?).map_err(|_| refused())?)),
            Self::Int => Value::Int(Some(i32::try_from(int(v)?).map_err(|_| refused())?)),
            Self::BigInt => Value::BigInt(Some(int(v)?)),
            Self::Bool => Value::Bool(Some(int(v)? != 0)),
            Self::Float | Self::Double => {
                #[allow(clippy::cast_precision_loss)] // as SQLite converts
                let f = match v {
                    ValueRef::Real(f) => f,
                    ValueRef::Integer(i) => i as f64,
                    _ => return Err(refused()),
                };
                if self == Self::Float {
                    #[allow(clippy::cast_possible_truncation)] // as sqlx decodes an f32
                    Value::Float(Some(f as f32))
                } else {
                    Value::Double(Some(f))
                }
            }
            Self::DateTimeUtc => match v {
                ValueRef::Text(t) => {
                    let text = std::str::from_utf8(t).map_err(|e| e.to_string())?;
                    Value::ChronoDateTimeUtc(Some(
                        sqlite_time::decode(text).ok_or_else(|| format!("datetime {text:?}"))?,
                    ))
                }
                _ => return Err(refused()),
            },
            Self::Bytes => match v {
                ValueRef::Blob(b) => Value::Bytes(Some(b.to_vec())),
                _ => return Err(refused()),
            },
        })
    }

    fn null(self) -> Value {
        match self {
            Self::Text => Value::String(None),
            Self::TinyInt => Value::TinyInt(None),
            Self::SmallInt => Value::SmallInt(None),
            Self::Int => Value::Int(None),
            Self::BigInt => Value::BigInt(None),
            Self::Bool => Value::Bool(None),
            Self::Float => Value::Float(None),
            Self::Double => Value::Double(None),
            Self::DateTimeUtc => Value::ChronoDateTimeUtc(None),
            Self::Bytes => Value::Bytes(None),
        }
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

    #[test]
    fn values_bind_as_sqlx_binds_them() {
        assert_eq!(bind_one(&Value::Bool(Some(true))), Ok(Sql::Integer(1)));
        assert_eq!(bind_one(&Value::Int(None)), Ok(Sql::Null));
        assert_eq!(
            bind_one(&Value::BigUnsigned(Some(u64::MAX))),
            Err(Miss::Bind("u64 above i64"))
        );
        assert!(bind_one(&Value::Json(None)).is_err());
    }

    #[test]
    fn a_stored_value_of_another_class_is_refused() {
        assert!(Kind::BigInt.decode(ValueRef::Text(b"12")).is_err());
        assert!(Kind::Int.decode(ValueRef::Integer(i64::MAX)).is_err());
        assert_eq!(
            Kind::Double.decode(ValueRef::Integer(3)),
            Ok(Value::Double(Some(3.0)))
        );
        assert_eq!(Kind::Text.decode(ValueRef::Null), Ok(Value::String(None)));
        assert!(Kind::Text.decode(ValueRef::Text(&[0xff, 0xfe])).is_err());
    }
}
