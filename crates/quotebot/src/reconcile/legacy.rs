//! Reading a legacy table as it is: its columns and types, and its rows
//! as JSON objects (`row_to_json`), in physical order.

use keel_platform::sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement, Value};
use serde_json::{Map, Value as Json};

use super::convert::{Column, Kind, normalize};

pub struct Table {
    /// (name, SQL type) of each column.
    pub columns: Vec<(String, String)>,
    pub rows: Vec<Map<String, Json>>,
}

pub async fn read<C: ConnectionTrait>(conn: &C, table: &str) -> Result<Table, DbErr> {
    let cols = conn
        .query_all_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT column_name::text AS name, \
                    CASE WHEN data_type = 'USER-DEFINED' THEN udt_name::text ELSE data_type::text END AS ty \
             FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
            [Value::from(table)],
        ))
        .await?;
    let columns = cols
        .iter()
        .map(|r| Ok((r.try_get("", "name")?, r.try_get("", "ty")?)))
        .collect::<Result<Vec<(String, String)>, DbErr>>()?;
    let rows = conn
        .query_all_raw(Statement::from_string(
            DbBackend::Postgres,
            format!("SELECT row_to_json(t)::text AS j FROM \"{table}\" t ORDER BY ctid"),
        ))
        .await?;
    let rows = rows
        .iter()
        .map(|r| {
            let text: String = r.try_get("", "j")?;
            match serde_json::from_str::<Json>(&text) {
                Ok(Json::Object(m)) => Ok(m),
                _ => Err(DbErr::Custom(format!("a row of {table} is not an object"))),
            }
        })
        .collect::<Result<Vec<_>, DbErr>>()?;
    Ok(Table { columns, rows })
}

impl Table {
    /// The legacy column standing for `current` (same name ignoring case
    /// and underscores).
    fn legacy_name(&self, current: &str) -> Option<&str> {
        let want = normalize(current);
        self.columns
            .iter()
            .find(|(n, _)| n == current)
            .or_else(|| self.columns.iter().find(|(n, _)| normalize(n) == want))
            .map(|(n, _)| n.as_str())
    }

    pub fn value<'a>(&self, row: &'a Map<String, Json>, current: &str) -> Option<&'a Json> {
        self.legacy_name(current).and_then(|n| row.get(n))
    }

    /// How a row is named in an error: its id, else its guildId.
    pub fn row_label(&self, row: &Map<String, Json>) -> String {
        for key in ["id", "guildId"] {
            if let Some(v) = self.value(row, key).filter(|v| !v.is_null()) {
                return format!("{key} {v}");
            }
        }
        "no id".to_owned()
    }

    /// One line per column that changes.
    pub fn changes(&self, current: &[Column]) -> Vec<String> {
        let mut out = Vec::new();
        for c in current {
            let want = c.kind.describe();
            match self.legacy_name(c.name) {
                None => out.push(format!(
                    "\"{}\": missing; {}",
                    c.name,
                    if c.default {
                        "filled with its default"
                    } else if c.nullable {
                        "left empty (NULL)"
                    } else {
                        "required: reconcile will abort"
                    }
                )),
                Some(name) => {
                    let ty = self
                        .columns
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or("", |(_, t)| t.as_str());
                    let same = same_type(ty, c.kind);
                    if name != c.name || !same {
                        out.push(format!("\"{name}\" ({ty}) -> \"{}\" ({want})", c.name));
                    }
                }
            }
        }
        for (name, ty) in &self.columns {
            if !current.iter().any(|c| normalize(c.name) == normalize(name)) {
                out.push(format!(
                    "\"{name}\" ({ty}): not in the current shape; dropped"
                ));
            }
        }
        out
    }
}

fn same_type(legacy: &str, kind: Kind) -> bool {
    match kind {
        Kind::Uuid => legacy == "uuid",
        Kind::Text => legacy == "text",
        Kind::Int => legacy == "integer",
        Kind::Bool => legacy == "boolean",
        Kind::Timestamp => legacy == "timestamp without time zone",
        Kind::Enum(name, _) => legacy == name,
    }
}
