//! The device list as CSV: exported page by page (memory does not grow with
//! the number of devices), imported row by row (a bad row is reported and
//! skipped, never fatal).

use std::collections::HashMap;

use bytes::Bytes;
use chrono::Utc;
use futures::StreamExt;
use keel_platform::db::Db;
use keel_platform::sea_orm::{
    ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::devices::{AppId, Status, upsert};
use super::registration::{ParamError, Registration};
use crate::domain::csv_out;
use crate::entity::push_device;

pub const COLUMNS: [&str; 11] = [
    "push_token",
    "device_type",
    "device_model",
    "os_version",
    "app_version",
    "locale",
    "timezone",
    "user_label",
    "active",
    "registered_at",
    "updated_at",
];

const PAGE: u64 = 1000;

fn cells(d: &push_device::Model) -> Vec<String> {
    let o = |v: &Option<String>| v.clone().unwrap_or_default();
    vec![
        d.push_token.clone(),
        d.device_type.clone(),
        o(&d.device_model),
        o(&d.os_version),
        o(&d.app_version),
        o(&d.locale),
        o(&d.timezone),
        o(&d.user_label),
        d.active.to_string(),
        keel_platform::time::iso_millis(&d.registered_at),
        keel_platform::time::iso_millis(&d.updated_at),
    ]
}

/// Every device as CSV chunks, a page at a time.
pub fn export(db: Db) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let header = futures::stream::once(async { Ok(csv_out::record(COLUMNS)) });
    let pages = futures::stream::unfold(Some(String::new()), move |after| {
        let db = db.clone();
        async move {
            let after = after?;
            let page = push_device::Entity::find()
                .filter(push_device::Column::PushToken.gt(after.as_str()))
                .order_by_asc(push_device::Column::PushToken)
                .limit(PAGE)
                .all(db.read())
                .await;
            match page {
                Err(e) => Some((Err(std::io::Error::other(e.to_string())), None)),
                Ok(rows) if rows.is_empty() => None,
                Ok(rows) => {
                    let last = rows.last().map(|d| d.push_token.clone());
                    let mut chunk = Vec::new();
                    for d in &rows {
                        chunk.extend_from_slice(&csv_out::record(cells(d)));
                    }
                    Some((Ok(Bytes::from(chunk)), last))
                }
            }
        }
    });
    header.chain(pages)
}

#[derive(Debug, Default, Serialize, ToSchema, PartialEq, Eq)]
pub struct ImportReport {
    /// New devices.
    pub imported: u64,
    /// Known devices whose values changed.
    pub updated: u64,
    /// Rows that changed nothing.
    pub skipped: u64,
    pub errors: Vec<RowError>,
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

/// Extension, declared type and content must all say CSV.
pub fn check_file(
    filename: Option<&str>,
    content_type: Option<&str>,
    bytes: &[u8],
) -> Result<(), InvalidFile> {
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
    if bytes.contains(&0) || std::str::from_utf8(bytes).is_err() {
        return Err(invalid_file_type("the content is not UTF-8 text"));
    }
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
    let header = reader
        .headers()
        .map_err(|_| invalid_file_type("the content is not CSV"))?;
    if !["push_token", "device_type"]
        .iter()
        .all(|c| header.iter().any(|h| h.trim() == *c))
    {
        return Err(invalid_file_type(
            "the header must name push_token and device_type",
        ));
    }
    Ok(())
}

/// Undoes the export's formula neutralisation (`'=x` back to `=x`).
fn restore(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if rest.starts_with(['=', '+', '-', '@', '\t', '\r']) => rest,
        _ => cell,
    }
}

struct Row {
    reg: Registration,
    /// `None` when the file has no `active` column (or the cell is empty).
    active: Option<bool>,
}

/// Which columns the file has: the others keep their stored values.
struct Present(Vec<String>);

impl Present {
    fn has(&self, column: &str) -> bool {
        self.0.iter().any(|c| c == column)
    }

    /// `new` where the file has the column, else what is stored.
    fn pick(&self, column: &str, new: Option<String>, stored: &Option<String>) -> Option<String> {
        if self.has(column) {
            new
        } else {
            stored.clone()
        }
    }

    /// The row as it would be stored over `d`.
    fn merge(&self, d: &push_device::Model, row: Row) -> Row {
        let r = row.reg;
        Row {
            reg: Registration {
                device_model: self.pick("device_model", r.device_model, &d.device_model),
                os_version: self.pick("os_version", r.os_version, &d.os_version),
                app_version: self.pick("app_version", r.app_version, &d.app_version),
                locale: self.pick("locale", r.locale, &d.locale),
                timezone: self.pick("timezone", r.timezone, &d.timezone),
                user_label: self.pick("user_label", r.user_label, &d.user_label),
                ..r
            },
            active: Some(row.active.unwrap_or(d.active)),
        }
    }
}

/// Why an imported row was skipped; its text is the report's reason.
#[derive(Debug, thiserror::Error)]
enum RowRefused {
    #[error(transparent)]
    Csv(#[from] csv::Error),
    #[error("active must be true or false, not {0:?}")]
    Active(String),
    #[error(transparent)]
    Registration(#[from] ParamError),
}

fn parse_row(
    header: &csv::StringRecord,
    record: &csv::StringRecord,
) -> Result<(Registration, Option<bool>), RowRefused> {
    let mut body = Map::new();
    let mut active = None;
    for (name, value) in header.iter().zip(record.iter()) {
        let value = restore(value);
        match name.trim() {
            "active" => {
                active = match value.trim() {
                    "" => None,
                    "true" | "1" => Some(true),
                    "false" | "0" => Some(false),
                    other => return Err(RowRefused::Active(other.to_owned())),
                };
            }
            "registered_at" | "updated_at" => {}
            field => {
                body.insert(field.to_owned(), Value::from(value));
            }
        }
    }
    let reg = Registration::parse(&body)?;
    Ok((reg, active))
}

fn same(d: &push_device::Model, r: &Registration, active: bool) -> bool {
    d.device_type == r.device_type
        && d.device_model == r.device_model
        && d.os_version == r.os_version
        && d.app_version == r.app_version
        && d.locale == r.locale
        && d.timezone == r.timezone
        && d.user_label == r.user_label
        && d.active == active
}

/// Upserts the file's rows by push token, 500 at a time.
pub async fn import(db: &Db, bytes: &[u8]) -> Result<ImportReport, ImportError> {
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
    let header = reader
        .headers()
        .map_err(|_| invalid_file_type("the content is not CSV"))?
        .clone();
    let present = Present(header.iter().map(|h| h.trim().to_owned()).collect());
    let mut report = ImportReport::default();
    let mut seen: HashMap<String, u64> = HashMap::new();
    let mut pending: Vec<Row> = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let line = u64::try_from(i).unwrap_or(0) + 2;
        let parsed = record
            .map_err(RowRefused::from)
            .and_then(|r| parse_row(&header, &r));
        match parsed {
            Err(refused) => report.errors.push(RowError {
                line,
                reason: refused.to_string(),
            }),
            Ok((reg, active)) => {
                if let Some(first) = seen.insert(reg.push_token.clone(), line) {
                    report.errors.push(RowError {
                        line,
                        reason: format!("push_token repeats line {first}"),
                    });
                    continue;
                }
                pending.push(Row { reg, active });
                if pending.len() >= 500 {
                    apply(db, &present, std::mem::take(&mut pending), &mut report).await?;
                }
            }
        }
    }
    apply(db, &present, pending, &mut report).await?;
    Ok(report)
}

async fn apply(
    db: &Db,
    present: &Present,
    rows: Vec<Row>,
    report: &mut ImportReport,
) -> Result<(), DbErr> {
    if rows.is_empty() {
        return Ok(());
    }
    let existing: HashMap<String, push_device::Model> = push_device::Entity::find()
        .filter(
            push_device::Column::PushToken.is_in(rows.iter().map(|r| r.reg.push_token.as_str())),
        )
        .all(db.read())
        .await?
        .into_iter()
        .map(|d| (d.push_token.clone(), d))
        .collect();
    let now = Utc::now();
    let mut writes = Vec::new();
    for row in rows {
        let (row, registered_at, app_id, reason) = match existing.get(&row.reg.push_token) {
            Some(d) => {
                let row = present.merge(d, row);
                if same(d, &row.reg, row.active.unwrap_or(true)) {
                    report.skipped += 1;
                    continue;
                }
                report.updated += 1;
                (
                    row,
                    d.registered_at,
                    d.app_id.clone(),
                    d.inactive_reason.clone(),
                )
            }
            None => {
                report.imported += 1;
                (row, now, "import".to_owned(), None)
            }
        };
        let status = if row.active.unwrap_or(true) {
            Status::Active
        } else {
            Status::Inactive(reason.unwrap_or_else(|| "import".to_owned()))
        };
        writes.push(row.reg.into_row(status, app_id, registered_at, now));
    }
    upsert(db.write(), writes, AppId::Keep).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_csv_passes_the_file_checks() {
        let csv = b"push_token,device_type\nExpoPushToken[a],ios\n";
        assert!(check_file(Some("d.csv"), Some("text/csv"), csv).is_ok());
        assert!(check_file(Some("d.txt"), Some("text/csv"), csv).is_err());
        assert!(check_file(Some("d.csv"), Some("image/png"), csv).is_err());
        assert!(check_file(Some("d.csv"), Some("text/csv"), b"\x89PNG\r\n\x1a\n\0\0").is_err());
        assert!(check_file(Some("d.csv"), Some("text/csv"), b"name,age\nx,1\n").is_err());
    }

    #[test]
    fn neutralised_cells_come_back_as_they_were() {
        assert_eq!(restore("'=cmd"), "=cmd");
        assert_eq!(restore("'quoted"), "'quoted");
        assert_eq!(restore("plain"), "plain");
    }
}
