//! Copying one table: rows streamed from the source in key order, hashed
//! as they pass, written to the target in batches (PostgreSQL's COPY FROM
//! STDIN; multi-row INSERTs on SQLite); then the target's rows read back
//! and hashed the same way.

use futures::StreamExt;
use futures::stream::BoxStream;
use sea_orm::sqlx::{self, QueryBuilder, Sqlite};
use sha2::{Digest, Sha256};

use super::cell::Cell;
use super::conn::Conn;
use crate::migrate::spec::{TableSpec, quote};

/// Bytes of COPY text sent at a time.
const COPY_CHUNK: usize = 1 << 20;
/// SQLite binds at most 32,766 values a statement; at most this many rows.
const SQLITE_ROWS: usize = 500;

/// What one side holds of a table: its rows and a hash of them in key
/// order, each in its canonical form.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tally {
    pub rows: u64,
    pub sha256: String,
}

/// Hashes rows as they pass.
#[derive(Default)]
struct Hasher {
    sha: Sha256,
    rows: u64,
    buf: Vec<u8>,
}

impl Hasher {
    fn row(&mut self, cells: &[Cell]) {
        self.buf.clear();
        for c in cells {
            c.canonical(&mut self.buf);
        }
        self.buf.push(0x1e);
        self.sha.update(&self.buf);
        self.rows += 1;
    }

    fn finish(self) -> Tally {
        Tally {
            rows: self.rows,
            sha256: hex::encode(self.sha.finalize()),
        }
    }
}

/// Why a table could not be copied.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("reading {table} from the source: {source}")]
    Read {
        table: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("writing {table} to the target: {source}")]
    Write {
        table: String,
        #[source]
        source: sqlx::Error,
    },
}

/// Below this many rows a PostgreSQL table is written with INSERTs: a
/// COPY's last data message and its end go out as two small writes, and
/// the second waits for the server's delayed acknowledgement of the first
/// (40 ms a table), which an INSERT's one round trip does not.
const PG_COPY_FROM: u64 = 5_000;

/// Copies `spec`'s table (`rows` of them) from `from` to `to`; `done(n)`
/// is told of every `n` rows written. The source's tally.
pub async fn copy(
    spec: &TableSpec,
    from: &mut Conn,
    rows_at_source: u64,
    to: &mut Conn,
    done: &mut (dyn FnMut(u64) + Send),
) -> Result<Tally, TableError> {
    let sql = spec.select_sql();
    let mut rows = from.rows(spec, &sql);
    let mut hash = Hasher::default();
    match to {
        Conn::Postgres(pg) if rows_at_source >= PG_COPY_FROM => {
            copy_in(pg, spec, &mut rows, &mut hash, done).await?;
        }
        _ => {
            let mut batch = Vec::with_capacity(SQLITE_ROWS);
            while let Some(row) = rows.next().await {
                let row = row.map_err(TableError::read(spec))?;
                hash.row(&row);
                batch.push(row);
                if batch.len() == SQLITE_ROWS {
                    insert(to, spec, std::mem::take(&mut batch)).await?;
                    done(SQLITE_ROWS as u64);
                }
            }
            let last = batch.len() as u64;
            insert(to, spec, batch).await?;
            done(last);
        }
    }
    Ok(hash.finish())
}

impl TableError {
    fn read(spec: &TableSpec) -> impl Fn(sqlx::Error) -> Self + '_ {
        |source| Self::Read {
            table: spec.name.clone(),
            source,
        }
    }

    fn write(spec: &TableSpec) -> impl Fn(sqlx::Error) -> Self + '_ {
        |source| Self::Write {
            table: spec.name.clone(),
            source,
        }
    }
}

/// The rows through PostgreSQL's COPY FROM STDIN, in chunks of text.
async fn copy_in(
    pg: &mut sqlx::PgConnection,
    spec: &TableSpec,
    rows: &mut BoxStream<'_, Result<Vec<Cell>, sqlx::Error>>,
    hash: &mut Hasher,
    done: &mut (dyn FnMut(u64) + Send),
) -> Result<(), TableError> {
    let (read, write) = (TableError::read(spec), TableError::write(spec));
    let statement = format!(
        "COPY {} ({}) FROM STDIN",
        quote(&spec.name),
        spec.column_list()
    );
    let mut copy = pg.copy_in_raw(&statement).await.map_err(&write)?;
    let mut buf = Vec::with_capacity(COPY_CHUNK + 4096);
    let mut pending = 0;
    while let Some(row) = rows.next().await {
        let row = row.map_err(&read)?;
        hash.row(&row);
        for (i, c) in row.iter().enumerate() {
            if i > 0 {
                buf.push(b'\t');
            }
            c.copy_text(&mut buf);
        }
        buf.push(b'\n');
        pending += 1;
        if buf.len() >= COPY_CHUNK {
            copy.send(std::mem::take(&mut buf)).await.map_err(&write)?;
            buf.reserve(COPY_CHUNK + 4096);
            done(pending);
            pending = 0;
        }
    }
    if !buf.is_empty() {
        copy.send(buf).await.map_err(&write)?;
    }
    copy.finish().await.map_err(&write)?;
    done(pending);
    Ok(())
}

/// One multi-row INSERT into the target.
async fn insert(to: &mut Conn, spec: &TableSpec, rows: Vec<Vec<Cell>>) -> Result<(), TableError> {
    if rows.is_empty() {
        return Ok(());
    }
    match to {
        Conn::Sqlite(c) => insert_sqlite(c, spec, rows).await,
        Conn::Postgres(c) => insert_pg(c, spec, rows).await,
    }
    .map_err(TableError::write(spec))
}

/// One multi-row INSERT, each value bound as it is.
async fn insert_sqlite(
    conn: &mut sqlx::SqliteConnection,
    spec: &TableSpec,
    rows: Vec<Vec<Cell>>,
) -> Result<(), sqlx::Error> {
    let mut q: QueryBuilder<Sqlite> = QueryBuilder::new(format!(
        "INSERT INTO {} ({}) ",
        quote(&spec.name),
        spec.column_list()
    ));
    q.push_values(rows, |mut b, row| {
        for cell in row {
            match cell {
                Cell::Null => b.push_bind(Option::<i64>::None),
                Cell::Int(v) => b.push_bind(v),
                Cell::Bool(v) => b.push_bind(v),
                Cell::F64(v) => b.push_bind(v),
                Cell::Text(v) => b.push_bind(v),
                Cell::Bytes(v) => b.push_bind(v),
                Cell::Time(v) => b.push_bind(v),
            };
        }
    });
    q.build().execute(conn).await.map(|_| ())
}

/// One multi-row INSERT, each value bound as its column's type (a NULL
/// too: PostgreSQL will not put an untyped one in a timestamp column).
async fn insert_pg(
    conn: &mut sqlx::PgConnection,
    spec: &TableSpec,
    rows: Vec<Vec<Cell>>,
) -> Result<(), sqlx::Error> {
    use crate::migrate::spec::Kind;
    use chrono::{DateTime, Utc};
    let mut q: QueryBuilder<sqlx::Postgres> = QueryBuilder::new(format!(
        "INSERT INTO {} ({}) ",
        quote(&spec.name),
        spec.column_list()
    ));
    q.push_values(rows, |mut b, row| {
        for (cell, col) in row.into_iter().zip(&spec.columns) {
            match (cell, &col.kind) {
                (Cell::Int(v), Kind::I16) => b.push_bind(i16::try_from(v).unwrap_or_default()),
                (Cell::Int(v), Kind::I32) => b.push_bind(i32::try_from(v).unwrap_or_default()),
                (Cell::Int(v), _) => b.push_bind(v),
                (Cell::Bool(v), _) => b.push_bind(v),
                (Cell::F64(v), _) => b.push_bind(v),
                (Cell::Text(v), _) => b.push_bind(v),
                (Cell::Bytes(v), _) => b.push_bind(v),
                (Cell::Time(v), _) => b.push_bind(v),
                (Cell::Null, Kind::I16) => b.push_bind(Option::<i16>::None),
                (Cell::Null, Kind::I32) => b.push_bind(Option::<i32>::None),
                (Cell::Null, Kind::I64) => b.push_bind(Option::<i64>::None),
                (Cell::Null, Kind::Bool) => b.push_bind(Option::<bool>::None),
                (Cell::Null, Kind::F64) => b.push_bind(Option::<f64>::None),
                (Cell::Null, Kind::Bytes) => b.push_bind(Option::<Vec<u8>>::None),
                (Cell::Null, Kind::Time) => b.push_bind(Option::<DateTime<Utc>>::None),
                (Cell::Null, Kind::Text | Kind::Unsupported(_)) => {
                    b.push_bind(Option::<String>::None)
                }
            };
        }
    });
    q.build().execute(conn).await.map(|_| ())
}

/// What `conn` holds of `spec`'s table.
pub async fn tally(spec: &TableSpec, conn: &mut Conn) -> Result<Tally, sqlx::Error> {
    let sql = spec.select_sql();
    let mut rows = conn.rows(spec, &sql);
    let mut hash = Hasher::default();
    while let Some(row) = rows.next().await {
        hash.row(&row?);
    }
    Ok(hash.finish())
}
