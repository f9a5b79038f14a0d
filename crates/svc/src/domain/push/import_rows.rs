//! A device import's rows: read from a record against the file's header,
//! merged over what is stored, and upserted by push token in batches.

use std::collections::HashMap;

use chrono::Utc;
use keel_platform::db::Db;
use keel_platform::sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter};
use serde_json::{Map, Value};

use super::devices::{AppId, Status, upsert};
use super::registration::{ParamError, Registration};
use crate::entity::push_device;

/// Undoes the export's formula neutralisation (`'=x` back to `=x`).
pub(super) fn restore(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if rest.starts_with(['=', '+', '-', '@', '\t', '\r']) => rest,
        _ => cell,
    }
}

pub(super) struct Row {
    pub reg: Registration,
    /// `None` when the file has no `active` column (or the cell is empty).
    pub active: Option<bool>,
}

/// Which columns the file has: the others keep their stored values.
pub(super) struct Present(pub Vec<String>);

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
pub(super) enum RowRefused {
    #[error("the line is not UTF-8 text")]
    NotText,
    #[error("the line holds a NUL character")]
    Nul,
    #[error("active must be true or false, not {0:?}")]
    Active(String),
    #[error("{}", said(.0))]
    Registration(#[from] ParamError),
}

/// A refused registration in a report's words: the column and why, not
/// the API's "Invalid parameter(s): push_token".
fn said(e: &ParamError) -> String {
    match e {
        ParamError::Invalid { field, problem } => format!("{field}: {problem}"),
        ParamError::Missing { field } => format!("{field} is missing"),
    }
}

/// A record's cells as text, or why not.
pub(super) fn text(fields: Vec<Vec<u8>>) -> Result<Vec<String>, RowRefused> {
    fields
        .into_iter()
        .map(|f| {
            if f.contains(&0) {
                return Err(RowRefused::Nul);
            }
            String::from_utf8(f).map_err(|_| RowRefused::NotText)
        })
        .collect()
}

pub(super) fn parse_row(header: &[String], record: &[String]) -> Result<Row, RowRefused> {
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
    Ok(Row { reg, active })
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

/// What a batch did to the stored devices.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Applied {
    pub imported: u64,
    pub updated: u64,
    pub skipped: u64,
}

/// Upserts `rows` (one batch); what it did.
pub(super) async fn apply(db: &Db, present: &Present, rows: Vec<Row>) -> Result<Applied, DbErr> {
    let mut report = Applied::default();
    if rows.is_empty() {
        return Ok(report);
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
    Ok(report)
}
