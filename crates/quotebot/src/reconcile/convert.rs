//! The current shape of each table (migration 0000) as column specs, and
//! the conversion of a legacy value (read as JSON through `row_to_json`)
//! into the text the current column's type reads: enums stored as text,
//! timestamps stored as text or epoch milliseconds, integers and booleans
//! stored as text, all accepted; anything else is refused with a reason.

use chrono::{DateTime, NaiveDate, NaiveDateTime};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Uuid,
    Text,
    Int,
    Bool,
    Timestamp,
    /// A PostgreSQL enum: its type name and labels, in order.
    Enum(&'static str, &'static [&'static str]),
}

impl Kind {
    /// The SQL cast from a text parameter.
    pub fn cast(self) -> String {
        match self {
            Self::Uuid => "::uuid".to_owned(),
            Self::Text => String::new(),
            Self::Int => "::integer".to_owned(),
            Self::Bool => "::boolean".to_owned(),
            Self::Timestamp => "::timestamp(3)".to_owned(),
            Self::Enum(name, _) => format!("::\"{name}\""),
        }
    }

    pub fn describe(self) -> String {
        match self {
            Self::Uuid => "uuid".to_owned(),
            Self::Text => "text".to_owned(),
            Self::Int => "integer".to_owned(),
            Self::Bool => "boolean".to_owned(),
            Self::Timestamp => "timestamp(3)".to_owned(),
            Self::Enum(name, _) => format!("\"{name}\""),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    pub nullable: bool,
    /// Whether the column has a default (used for a missing or null value).
    pub default: bool,
}

const fn col(name: &'static str, kind: Kind, nullable: bool, default: bool) -> Column {
    Column {
        name,
        kind,
        nullable,
        default,
    }
}

pub const FREQUENCY: Kind = Kind::Enum("MotivationFrequency", &["Daily", "Weekly", "Monthly"]);
pub const STATUS: Kind = Kind::Enum("SuggestionStatus", &["Pending", "Approved", "Rejected"]);
pub const ACTIVITY: Kind = Kind::Enum(
    "ActivityType",
    &["Custom", "Listening", "Streaming", "Playing"],
);

/// Every table, in migration 0000's shape.
pub const TABLES: [(&str, &[Column]); 4] = [
    (
        "Guild",
        &[
            col("id", Kind::Uuid, false, true),
            col("guildId", Kind::Text, false, false),
            col("motivationChannelId", Kind::Text, true, false),
            col("motivationFrequency", FREQUENCY, false, true),
            col("motivationTime", Kind::Text, false, true),
            col("motivationDay", Kind::Int, true, false),
            col("timezone", Kind::Text, false, true),
            col("lastMotivationSentAt", Kind::Timestamp, true, false),
            col("isPremium", Kind::Bool, false, true),
            col("joinedAt", Kind::Timestamp, false, true),
            col("updatedAt", Kind::Timestamp, false, true),
        ],
    ),
    (
        "MotivationQuote",
        &[
            col("id", Kind::Uuid, false, true),
            col("quote", Kind::Text, false, false),
            col("author", Kind::Text, false, false),
            col("addedBy", Kind::Text, false, false),
            col("createdAt", Kind::Timestamp, false, true),
        ],
    ),
    (
        "SuggestionQuote",
        &[
            col("id", Kind::Uuid, false, true),
            col("quote", Kind::Text, false, false),
            col("author", Kind::Text, false, false),
            col("addedBy", Kind::Text, false, false),
            col("status", STATUS, false, true),
            col("reviewedBy", Kind::Text, true, false),
            col("reviewedAt", Kind::Timestamp, true, false),
            col("createdAt", Kind::Timestamp, false, true),
            col("updatedAt", Kind::Timestamp, false, true),
        ],
    ),
    (
        "PlatformActivity",
        &[
            col("id", Kind::Uuid, false, true),
            col("activity", Kind::Text, false, false),
            col("type", ACTIVITY, false, true),
            col("url", Kind::Text, true, false),
            col("createdAt", Kind::Timestamp, false, true),
        ],
    ),
];

/// A legacy column name as the current one it stands for: case and
/// underscores ignored (`guild_id` is `guildId`).
pub fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// What goes into the new row for one column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// The column's default (or, for an id that is not a UUID, a new one).
    Default,
    Null,
    Text(String),
}

/// Why a legacy value cannot be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unconvertible {
    #[error("no value, and the column is required without a default")]
    Required,
    #[error("{0} is not a single value")]
    NotScalar(Value),
    #[error("{0} is not an integer")]
    NotInteger(Value),
    #[error("{0} is not a boolean")]
    NotBoolean(Value),
    #[error("{0} is not a timestamp")]
    NotTimestamp(Value),
    #[error("{value} is not one of {name} ({})", labels.join(", "))]
    NotInEnum {
        value: Value,
        name: &'static str,
        labels: &'static [&'static str],
    },
}

/// Converts one legacy value for `column`; `Err` says why it cannot be.
pub fn convert(column: &Column, value: Option<&Value>) -> Result<Cell, Unconvertible> {
    let value = value.filter(|v| !v.is_null());
    let Some(v) = value else {
        return if column.default {
            Ok(Cell::Default)
        } else if column.nullable {
            Ok(Cell::Null)
        } else {
            Err(Unconvertible::Required)
        };
    };
    let text = match v {
        Value::String(s) => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => return Err(Unconvertible::NotScalar(other.clone())),
    };
    match column.kind {
        Kind::Text => Ok(Cell::Text(match v {
            Value::String(s) => s.clone(),
            _ => text,
        })),
        // Not a UUID (a legacy text id): the database gives a new one;
        // nothing refers to these ids.
        Kind::Uuid => Ok(uuid_or_new(&text)),
        Kind::Int => text
            .parse::<i32>()
            .map(|n| Cell::Text(n.to_string()))
            .map_err(|_| Unconvertible::NotInteger(v.clone())),
        Kind::Bool => match text.to_ascii_lowercase().as_str() {
            "true" | "t" | "1" | "yes" => Ok(Cell::Text("true".to_owned())),
            "false" | "f" | "0" | "no" => Ok(Cell::Text("false".to_owned())),
            _ => Err(Unconvertible::NotBoolean(v.clone())),
        },
        Kind::Timestamp => timestamp(v, &text)
            .map(|t| Cell::Text(t.format("%Y-%m-%d %H:%M:%S%.3f").to_string()))
            .ok_or_else(|| Unconvertible::NotTimestamp(v.clone())),
        Kind::Enum(name, labels) => labels
            .iter()
            .find(|l| l.eq_ignore_ascii_case(&text))
            .map(|l| Cell::Text((*l).to_owned()))
            .ok_or_else(|| Unconvertible::NotInEnum {
                value: v.clone(),
                name,
                labels,
            }),
    }
}

fn uuid_or_new(text: &str) -> Cell {
    let hex = text.len() == 36
        && text.chars().enumerate().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    if hex {
        Cell::Text(text.to_ascii_lowercase())
    } else {
        Cell::Default
    }
}

/// A legacy timestamp, taken as UTC: RFC 3339, `YYYY-MM-DD HH:MM:SS[.fff]`
/// (with `T` too), a date alone, or epoch milliseconds.
fn timestamp(v: &Value, text: &str) -> Option<NaiveDateTime> {
    if let Some(ms) = v.as_i64().or_else(|| {
        text.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| text.parse().ok())
            .flatten()
    }) {
        return DateTime::from_timestamp_millis(ms).map(|t| t.naive_utc());
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.naive_utc());
    }
    for f in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, f) {
            return Some(t);
        }
    }
    for f in ["%Y-%m-%d %H:%M:%S%.f%#z", "%Y-%m-%d %H:%M:%S%.f%:z"] {
        if let Ok(t) = DateTime::parse_from_str(text, f) {
            return Some(t.naive_utc());
        }
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn column(kind: Kind, nullable: bool, default: bool) -> Column {
        col("c", kind, nullable, default)
    }

    #[test]
    fn legacy_values_become_the_current_types() {
        let ts = column(Kind::Timestamp, true, false);
        let want = Cell::Text("2024-03-01 09:30:00.250".to_owned());
        for v in [
            json!("2024-03-01T09:30:00.250Z"),
            json!("2024-03-01 09:30:00.25"),
            json!("2024-03-01 10:30:00.25+01"),
            json!(1_709_285_400_250_i64),
            json!("1709285400250"),
        ] {
            assert_eq!(convert(&ts, Some(&v)), Ok(want.clone()), "{v}");
        }
        let freq = column(FREQUENCY, false, true);
        assert_eq!(
            convert(&freq, Some(&json!("weekly"))),
            Ok(Cell::Text("Weekly".into()))
        );
        assert_eq!(convert(&freq, None), Ok(Cell::Default));
        assert!(
            convert(&freq, Some(&json!("Hourly")))
                .unwrap_err()
                .to_string()
                .contains("Hourly")
        );
        let int = column(Kind::Int, true, false);
        assert_eq!(convert(&int, Some(&json!("3"))), Ok(Cell::Text("3".into())));
        assert!(convert(&int, Some(&json!("third"))).is_err());
        let b = column(Kind::Bool, false, true);
        assert_eq!(
            convert(&b, Some(&json!("t"))),
            Ok(Cell::Text("true".into()))
        );
        let id = column(Kind::Uuid, false, true);
        assert_eq!(convert(&id, Some(&json!("clx0abc"))), Ok(Cell::Default));
        let u = "6F9619FF-8B86-D011-B42D-00C04FC964FF";
        assert_eq!(
            convert(&id, Some(&json!(u))),
            Ok(Cell::Text(u.to_lowercase()))
        );
        let required = column(Kind::Text, false, false);
        assert!(convert(&required, None).is_err());
        assert_eq!(
            convert(&column(Kind::Text, true, false), Some(&json!(null))),
            Ok(Cell::Null)
        );
        assert!(convert(&ts, Some(&json!("yesterday"))).is_err());
    }

    #[test]
    fn legacy_column_names_match_ignoring_case_and_underscores() {
        assert_eq!(normalize("guild_id"), normalize("guildId"));
        assert_eq!(
            normalize("LASTMOTIVATIONSENTAT"),
            normalize("lastMotivationSentAt")
        );
    }
}
