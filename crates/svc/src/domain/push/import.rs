//! The device list imported from CSV: read as it arrives (never held
//! whole), upserted by push token 500 rows at a time, at most
//! `max_rows` rows and until `deadline`. A bad row is reported (the first
//! hundred with their reasons, the rest counted) and skipped, never fatal;
//! an import that stops early says where and why, and what it did.

use std::collections::HashMap;
use std::time::Instant;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use keel_platform::db::Db;
use keel_platform::sea_orm::DbErr;
use serde::Serialize;
use utoipa::ToSchema;

use super::csv_in::Records;
use super::import_rows::{Present, Row, apply, parse_row, text};

/// Refused lines listed with their reasons; beyond, only counted.
pub const LISTED: usize = 100;
/// Rows written in one batch.
const BATCH: usize = 500;

#[derive(Debug, Default, Serialize, ToSchema, PartialEq, Eq)]
pub struct ImportReport {
    /// New devices.
    pub imported: u64,
    /// Known devices whose values changed.
    pub updated: u64,
    /// Rows that changed nothing.
    pub skipped: u64,
    /// The first 100 refused lines, with their reasons.
    pub errors: Vec<RowError>,
    /// Refused lines beyond those listed.
    pub errors_not_listed: u64,
    /// Whether every line of the file was read. When not, the lines from
    /// `stopped_at_line` on were not read (nothing of them was written):
    /// import them in another file.
    pub complete: bool,
    pub stopped_at_line: Option<u64>,
    pub stopped_because: Option<String>,
}

impl ImportReport {
    fn refuse(&mut self, line: u64, why: impl std::fmt::Display) {
        if self.errors.len() < LISTED {
            self.errors.push(RowError {
                line,
                reason: why.to_string(),
            });
        } else {
            self.errors_not_listed += 1;
        }
    }

    fn stop(&mut self, line: u64, because: String) {
        self.complete = false;
        self.stopped_at_line = Some(line);
        self.stopped_because = Some(because);
    }

    /// Refused lines in all.
    pub fn refused(&self) -> u64 {
        u64::try_from(self.errors.len()).unwrap_or(u64::MAX) + self.errors_not_listed
    }
}

#[derive(Debug, Serialize, ToSchema, PartialEq, Eq)]
pub struct RowError {
    /// Line in the file (the header is line 1).
    pub line: u64,
    pub reason: String,
}

/// An upload that is not a CSV file of devices, saying why.
#[derive(Debug, thiserror::Error)]
#[error("Only CSV files are accepted: {0}")]
pub struct InvalidFile(pub String);

pub fn invalid_file_type(why: &str) -> InvalidFile {
    InvalidFile(why.to_owned())
}

/// Why an import did not run.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    InvalidFile(#[from] InvalidFile),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Declared types a CSV upload may carry.
const CSV_TYPES: [&str; 5] = [
    "text/csv",
    "application/csv",
    "text/x-csv",
    "application/vnd.ms-excel",
    "text/comma-separated-values",
];

/// The file's name and declared type must say CSV (its header is checked
/// as it arrives).
pub fn check_file(filename: Option<&str>, content_type: Option<&str>) -> Result<(), InvalidFile> {
    let csv_name = filename.is_some_and(|f| f.to_ascii_lowercase().ends_with(".csv"));
    if !csv_name {
        return Err(invalid_file_type("the file name must end in .csv"));
    }
    let declared = content_type
        .map(|t| {
            t.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    if !CSV_TYPES.contains(&declared.as_str()) {
        return Err(invalid_file_type("the declared type is not text/csv"));
    }
    Ok(())
}

/// The header's column names, if it is one: text naming push_token and
/// device_type.
fn header(fields: Vec<Vec<u8>>) -> Result<Vec<String>, InvalidFile> {
    let names = text(fields).map_err(|_| invalid_file_type("the content is not UTF-8 text"))?;
    let names: Vec<String> = names.iter().map(|h| h.trim().to_owned()).collect();
    if !["push_token", "device_type"]
        .iter()
        .all(|c| names.iter().any(|h| h == c))
    {
        return Err(invalid_file_type(
            "the header must name push_token and device_type",
        ));
    }
    Ok(names)
}

/// How much one import may do.
#[derive(Debug, Clone, Copy)]
pub struct ImportLimits {
    /// Rows (after the header) read at most.
    pub max_rows: u64,
    /// When to stop reading (before the request's own time runs out).
    pub deadline: Instant,
}

impl ImportLimits {
    /// Why reading must stop before `line`, if it must.
    fn reached(&self, line: u64) -> Option<String> {
        if line - 1 > self.max_rows {
            return Some(format!("an import reads at most {} rows", self.max_rows));
        }
        (Instant::now() >= self.deadline).then(|| "the import ran out of time".to_owned())
    }
}

/// What is being imported: the header, the rows waiting for their batch,
/// the push tokens seen (a token twice is refused the second time).
struct Import<'a> {
    db: &'a Db,
    present: Present,
    header: Vec<String>,
    pending: Vec<Row>,
    seen: HashMap<String, u64>,
    report: ImportReport,
}

impl<'a> Import<'a> {
    fn new(db: &'a Db, header: Vec<String>) -> Self {
        Self {
            db,
            present: Present(header.clone()),
            header,
            pending: Vec::new(),
            seen: HashMap::new(),
            report: ImportReport {
                complete: true,
                ..ImportReport::default()
            },
        }
    }

    async fn row(&mut self, line: u64, fields: Vec<Vec<u8>>) -> Result<(), DbErr> {
        if fields.len() == 1 && fields[0].is_empty() {
            return Ok(());
        }
        let parsed = text(fields).and_then(|cells| parse_row(&self.header, &cells));
        match parsed {
            Err(refused) => self.report.refuse(line, refused),
            Ok(row) => {
                if let Some(first) = self.seen.insert(row.reg.push_token.clone(), line) {
                    self.report
                        .refuse(line, format!("push_token repeats line {first}"));
                    return Ok(());
                }
                self.pending.push(row);
                if self.pending.len() >= BATCH {
                    self.flush().await?;
                }
            }
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), DbErr> {
        let rows = std::mem::take(&mut self.pending);
        let done = apply(self.db, &self.present, rows).await?;
        self.report.imported += done.imported;
        self.report.updated += done.updated;
        self.report.skipped += done.skipped;
        Ok(())
    }

    /// Writes what waits and ends the report, stopped at `line` for
    /// `because`.
    async fn stop(mut self, line: u64, because: String) -> Result<ImportReport, DbErr> {
        self.flush().await?;
        self.report.stop(line, because);
        Ok(self.report)
    }
}

/// Imports the CSV file arriving as `chunks`.
pub async fn import<S, E>(
    db: &Db,
    mut chunks: S,
    limits: ImportLimits,
) -> Result<ImportReport, ImportError>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let mut records = Records::default();
    let mut import: Option<Import<'_>> = None;
    // Lines read so far (the header is line 1).
    let mut line: u64 = 0;
    loop {
        let (chunk, last) = match chunks.next().await {
            Some(Ok(chunk)) => (chunk, false),
            Some(Err(e)) => {
                let cut = format!("the upload was cut off: {e}");
                return match import {
                    None => Err(invalid_file_type(&cut).into()),
                    Some(im) => Ok(im.stop(line + 1, cut).await?),
                };
            }
            None => (Bytes::new(), true),
        };
        let mut input = &chunk[..];
        while let Some(fields) = records.next(&mut input) {
            line += 1;
            let Some(im) = import.as_mut() else {
                import = Some(Import::new(db, header(fields)?));
                continue;
            };
            if let Some(because) = limits.reached(line) {
                let because = format!(
                    "{because}: lines from {line} on were not read; import them in another file"
                );
                return match import {
                    Some(im) => Ok(im.stop(line, because).await?),
                    None => Err(invalid_file_type("the file is empty").into()),
                };
            }
            im.row(line, fields).await?;
        }
        if last {
            break;
        }
    }
    let Some(mut im) = import else {
        return Err(invalid_file_type("the file is empty").into());
    };
    im.flush().await?;
    Ok(im.report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_csv_name_and_type_pass_the_file_checks() {
        assert!(check_file(Some("d.csv"), Some("text/csv")).is_ok());
        assert!(check_file(Some("D.CSV"), Some("text/csv; charset=utf-8")).is_ok());
        assert!(check_file(Some("d.txt"), Some("text/csv")).is_err());
        assert!(check_file(Some("d.csv"), Some("image/png")).is_err());
        assert!(header(vec![b"\x89PNG".to_vec()]).is_err());
        assert!(header(vec![b"name".to_vec(), b"age".to_vec()]).is_err());
        assert!(header(vec![b"push_token".to_vec(), b" device_type".to_vec()]).is_ok());
    }

    #[test]
    fn neutralised_cells_come_back_as_they_were() {
        use super::super::import_rows::restore;
        assert_eq!(restore("'=cmd"), "=cmd");
        assert_eq!(restore("'quoted"), "'quoted");
        assert_eq!(restore("plain"), "plain");
    }
}
