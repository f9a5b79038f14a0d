//! One value of one row, as the copy carries it: decoded from either
//! backend by its column's kind, written in a canonical form (what the
//! checksums hash, so that a value reads the same from both backends) and
//! in PostgreSQL's COPY text format.

use chrono::{DateTime, Utc};
use sea_orm::sqlx::postgres::PgRow;
use sea_orm::sqlx::sqlite::SqliteRow;
use sea_orm::sqlx::{self, ColumnIndex, Decode, Row, Type};

use crate::migrate::spec::Kind;

#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Bool(bool),
    F64(f64),
    Text(String),
    Bytes(Vec<u8>),
    Time(DateTime<Utc>),
}

/// Column `i` of a SQLite row, as `kind` says.
pub fn from_sqlite(row: &SqliteRow, i: usize, kind: &Kind) -> Result<Cell, sqlx::Error> {
    decode(row, i, kind)
}

/// Column `i` of a PostgreSQL row, as `kind` says: its smaller integers
/// are types of their own there.
pub fn from_pg(row: &PgRow, i: usize, kind: &Kind) -> Result<Cell, sqlx::Error> {
    let small = match kind {
        Kind::I16 => row.try_get::<Option<i16>, _>(i)?.map(i64::from),
        Kind::I32 => row.try_get::<Option<i32>, _>(i)?.map(i64::from),
        _ => return decode(row, i, kind),
    };
    Ok(small.map_or(Cell::Null, Cell::Int))
}

/// Column `i` of a row of either backend, as `kind` says.
fn decode<'r, R: Row>(row: &'r R, i: usize, kind: &Kind) -> Result<Cell, sqlx::Error>
where
    usize: ColumnIndex<R>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    bool: Decode<'r, R::Database> + Type<R::Database>,
    f64: Decode<'r, R::Database> + Type<R::Database>,
    String: Decode<'r, R::Database> + Type<R::Database>,
    Vec<u8>: Decode<'r, R::Database> + Type<R::Database>,
    DateTime<Utc>: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(match kind {
        Kind::I16 | Kind::I32 | Kind::I64 => row.try_get::<Option<i64>, _>(i)?.map(Cell::Int),
        Kind::Bool => row.try_get::<Option<bool>, _>(i)?.map(Cell::Bool),
        Kind::F64 => row.try_get::<Option<f64>, _>(i)?.map(Cell::F64),
        Kind::Text | Kind::Unsupported(_) => row.try_get::<Option<String>, _>(i)?.map(Cell::Text),
        Kind::Bytes => row.try_get::<Option<Vec<u8>>, _>(i)?.map(Cell::Bytes),
        Kind::Time => row.try_get::<Option<DateTime<Utc>>, _>(i)?.map(Cell::Time),
    }
    .unwrap_or(Cell::Null))
}

/// Microseconds since the epoch, rounded down: PostgreSQL keeps
/// microseconds, SQLite's text what was written (nanoseconds); a copy
/// keeps microseconds, and no answer of keel shows more than milliseconds.
fn micros(t: &DateTime<Utc>) -> i64 {
    t.timestamp().saturating_mul(1_000_000) + i64::from(t.timestamp_subsec_micros())
}

impl Cell {
    /// Appends the canonical form: a tag, the value, a separator. Equal
    /// values on the two backends write equal bytes.
    pub fn canonical(&self, out: &mut Vec<u8>) {
        match self {
            Cell::Null => out.push(b'N'),
            Cell::Int(v) => {
                out.push(b'i');
                out.extend_from_slice(v.to_string().as_bytes());
            }
            Cell::Bool(v) => out.extend_from_slice(if *v { b"b1" } else { b"b0" }),
            Cell::F64(v) => {
                out.push(b'f');
                out.extend_from_slice(&v.to_bits().to_be_bytes());
            }
            Cell::Text(s) => {
                out.push(b't');
                out.extend_from_slice(s.len().to_string().as_bytes());
                out.push(b':');
                out.extend_from_slice(s.as_bytes());
            }
            Cell::Bytes(b) => {
                out.push(b'x');
                out.extend_from_slice(b.len().to_string().as_bytes());
                out.push(b':');
                out.extend_from_slice(b);
            }
            Cell::Time(t) => {
                out.push(b'd');
                out.extend_from_slice(micros(t).to_string().as_bytes());
            }
        }
        out.push(0x1f);
    }

    /// Appends the value in PostgreSQL's COPY text format.
    pub fn copy_text(&self, out: &mut Vec<u8>) {
        match self {
            Cell::Null => out.extend_from_slice(b"\\N"),
            Cell::Int(v) => out.extend_from_slice(v.to_string().as_bytes()),
            Cell::Bool(v) => out.push(if *v { b't' } else { b'f' }),
            Cell::F64(v) => {
                let text = if v.is_nan() {
                    "NaN".to_owned()
                } else if v.is_infinite() {
                    if *v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
                } else {
                    // Rust writes the shortest text that reads back exactly.
                    v.to_string()
                };
                out.extend_from_slice(text.as_bytes());
            }
            Cell::Text(s) => {
                for b in s.bytes() {
                    match b {
                        b'\\' => out.extend_from_slice(b"\\\\"),
                        b'\t' => out.extend_from_slice(b"\\t"),
                        b'\n' => out.extend_from_slice(b"\\n"),
                        b'\r' => out.extend_from_slice(b"\\r"),
                        other => out.push(other),
                    }
                }
            }
            Cell::Bytes(b) => {
                out.extend_from_slice(b"\\\\x");
                out.extend_from_slice(hex::encode(b).as_bytes());
            }
            Cell::Time(t) => {
                let us = micros(t);
                let secs = us.div_euclid(1_000_000);
                let frac = us.rem_euclid(1_000_000);
                let whole = DateTime::<Utc>::from_timestamp(secs, 0).unwrap_or_default();
                out.extend_from_slice(
                    format!("{}.{frac:06}+00", whole.format("%Y-%m-%d %H:%M:%S")).as_bytes(),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy_text(c: &Cell) -> String {
        let mut out = Vec::new();
        c.copy_text(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn copy_text_escapes_what_copy_reads_specially() {
        assert_eq!(copy_text(&Cell::Null), "\\N");
        assert_eq!(
            copy_text(&Cell::Text("a\tb\nc\\d\re".into())),
            "a\\tb\\nc\\\\d\\re"
        );
        assert_eq!(copy_text(&Cell::Text("\\N".into())), "\\\\N");
        assert_eq!(copy_text(&Cell::Bytes(vec![0, 255])), "\\\\x00ff");
        assert_eq!(copy_text(&Cell::Bool(true)), "t");
        assert_eq!(copy_text(&Cell::F64(0.1)), "0.1");
        assert_eq!(copy_text(&Cell::F64(f64::NAN)), "NaN");
        let t = DateTime::parse_from_rfc3339("2026-12-27T02:52:57.783587798Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default();
        assert_eq!(copy_text(&Cell::Time(t)), "2026-12-27 02:52:57.783587+00");
    }

    #[test]
    fn a_timestamp_is_canonical_to_the_microsecond() {
        let at = |s: &str| {
            DateTime::parse_from_rfc3339(s)
                .map(|t| t.with_timezone(&Utc))
                .unwrap_or_default()
        };
        let canon = |c: Cell| {
            let mut out = Vec::new();
            c.canonical(&mut out);
            out
        };
        assert_eq!(
            canon(Cell::Time(at("2026-12-27T02:52:57.783587798Z"))),
            canon(Cell::Time(at("2026-12-27T02:52:57.783587Z")))
        );
        assert_ne!(
            canon(Cell::Time(at("2026-12-27T02:52:57.783588Z"))),
            canon(Cell::Time(at("2026-12-27T02:52:57.783587Z")))
        );
        // Lengths keep "ab" + "c" apart from "a" + "bc".
        let mut ab_c = canon(Cell::Text("ab".into()));
        ab_c.extend(canon(Cell::Text("c".into())));
        let mut a_bc = canon(Cell::Text("a".into()));
        a_bc.extend(canon(Cell::Text("bc".into())));
        assert_ne!(ab_c, a_bc);
    }
}
