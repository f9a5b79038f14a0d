//! One plain connection to either backend (sqlx's, outside any pool: the
//! copy holds one transaction on each side from start to end), with what
//! the copy asks of it.

use std::str::FromStr;

use futures::stream::{BoxStream, StreamExt};
use sea_orm::sqlx::postgres::{PgConnectOptions, PgConnection};
use sea_orm::sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sea_orm::sqlx::{self, AssertSqlSafe, ConnectOptions, Connection, Row};

use super::cell::{self, Cell};
use crate::migrate::spec::{TableSpec, quote};

/// A row's cells, each decoded by its column's kind.
fn cells<R>(
    row: R,
    spec: &TableSpec,
    decode: fn(&R, usize, &crate::migrate::spec::Kind) -> Result<Cell, sqlx::Error>,
) -> Result<Vec<Cell>, sqlx::Error> {
    (spec.columns.iter().enumerate())
        .map(|(i, col)| decode(&row, i, &col.kind))
        .collect()
}

/// The statements the copy runs are built from the entities' own table and
/// column names (quoted) and fixed text; nothing comes from a request.
fn statement(sql: &str) -> AssertSqlSafe<String> {
    AssertSqlSafe(sql.to_owned())
}

pub enum Conn {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

impl Conn {
    /// A connection to `url`; a SQLite file is opened read-only when
    /// `read_only` (and must exist).
    pub async fn open(url: &str, read_only: bool) -> Result<Self, sqlx::Error> {
        if url.starts_with("sqlite:") {
            let opts = SqliteConnectOptions::from_str(url)?
                .read_only(read_only)
                .create_if_missing(!read_only)
                .foreign_keys(false)
                .disable_statement_logging();
            Ok(Self::Sqlite(opts.connect().await?))
        } else {
            let opts = PgConnectOptions::from_str(url)?.disable_statement_logging();
            Ok(Self::Postgres(opts.connect().await?))
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Self::Postgres(_))
    }

    pub async fn exec(&mut self, sql: &str) -> Result<u64, sqlx::Error> {
        match self {
            Self::Sqlite(c) => sqlx::query(statement(sql))
                .execute(c)
                .await
                .map(|r| r.rows_affected()),
            Self::Postgres(c) => sqlx::query(statement(sql))
                .execute(c)
                .await
                .map(|r| r.rows_affected()),
        }
    }

    /// The first column of the first row as a number (a count, a version).
    pub async fn scalar_i64(&mut self, sql: &str) -> Result<Option<i64>, sqlx::Error> {
        match self {
            Self::Sqlite(c) => sqlx::query(statement(sql))
                .fetch_optional(c)
                .await?
                .map(|r| r.try_get::<Option<i64>, _>(0))
                .transpose()
                .map(Option::flatten),
            Self::Postgres(c) => sqlx::query(statement(sql))
                .fetch_optional(c)
                .await?
                .map(|r| r.try_get::<Option<i64>, _>(0))
                .transpose()
                .map(Option::flatten),
        }
    }

    /// Rows of two text columns (catalog reads).
    pub async fn pairs(&mut self, sql: &str) -> Result<Vec<(String, String)>, sqlx::Error> {
        let text = |a: Result<String, sqlx::Error>, b: Result<String, sqlx::Error>| Ok((a?, b?));
        match self {
            Self::Sqlite(c) => sqlx::query(statement(sql))
                .fetch_all(c)
                .await?
                .iter()
                .map(|r| text(r.try_get(0), r.try_get(1)))
                .collect(),
            Self::Postgres(c) => sqlx::query(statement(sql))
                .fetch_all(c)
                .await?
                .iter()
                .map(|r| text(r.try_get(0), r.try_get(1)))
                .collect(),
        }
    }

    /// Whether table `name` exists.
    pub async fn has_table(&mut self, name: &str) -> Result<bool, sqlx::Error> {
        let sql = match self {
            Self::Sqlite(_) => format!(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '{}'",
                name.replace('\'', "''")
            ),
            Self::Postgres(_) => format!(
                "SELECT COUNT(*)::bigint FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name = '{}'",
                name.replace('\'', "''")
            ),
        };
        Ok(self.scalar_i64(&sql).await?.unwrap_or(0) > 0)
    }

    /// How many rows `table` holds.
    pub async fn count(&mut self, table: &str) -> Result<u64, sqlx::Error> {
        let n = self
            .scalar_i64(&format!("SELECT COUNT(*) FROM {}", quote(table)))
            .await?
            .unwrap_or(0);
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// Every row of `spec`'s table in key order, each decoded by its
    /// column's kind.
    pub fn rows<'a>(
        &'a mut self,
        spec: &'a TableSpec,
        sql: &'a str,
    ) -> BoxStream<'a, Result<Vec<Cell>, sqlx::Error>> {
        match self {
            Self::Sqlite(c) => sqlx::query(statement(sql))
                .fetch(c)
                .map(move |r| cells(r?, spec, cell::from_sqlite))
                .boxed(),
            Self::Postgres(c) => sqlx::query(statement(sql))
                .fetch(c)
                .map(move |r| cells(r?, spec, cell::from_pg))
                .boxed(),
        }
    }

    pub async fn close(self) {
        let closed = match self {
            Self::Sqlite(c) => c.close().await,
            Self::Postgres(c) => c.close().await,
        };
        if let Err(e) = closed {
            tracing::debug!(error = %e, "closing a copy connection");
        }
    }
}
