//! What a table is made of, taken from its SeaORM entity: its name, its
//! columns in order with the kind of value each holds, and its primary key.
//! The one mapping between the two backends' column types is the kind
//! (`Kind`): both sides are read and written through it.

use sea_orm::sea_query::ColumnType;
use sea_orm::{ColumnTrait, EntityTrait, IdenStatic, Iterable, PrimaryKeyToColumn};

/// The kind of value a column holds, the same on both backends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    I16,
    I32,
    I64,
    Bool,
    F64,
    /// Strings, text and string-valued enums.
    Text,
    Bytes,
    /// `timestamp with time zone` on PostgreSQL, RFC 3339 text on SQLite.
    Time,
    /// A column type the copy does not know (named; the copy refuses).
    Unsupported(String),
}

#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
}

/// One table of one component.
#[derive(Debug, Clone)]
pub struct TableSpec {
    pub name: String,
    pub columns: Vec<Column>,
    /// The primary key's columns: rows are read and compared in its order.
    pub key: Vec<String>,
}

impl TableSpec {
    /// The table of entity `E`.
    pub fn of<E: EntityTrait>() -> Self {
        let columns = E::Column::iter()
            .map(|c| Column {
                name: c.as_str().to_owned(),
                kind: kind_of(c.def().get_column_type()),
            })
            .collect();
        let key = E::PrimaryKey::iter()
            .map(|k| k.into_column().as_str().to_owned())
            .collect();
        Self {
            name: E::default().table_name().to_owned(),
            columns,
            key,
        }
    }

    /// `"a", "b"` for SQL.
    pub fn column_list(&self) -> String {
        self.columns
            .iter()
            .map(|c| quote(&c.name))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every row in key order, each column as the spec lists them.
    pub fn select_sql(&self) -> String {
        let order = self
            .key
            .iter()
            .map(|k| quote(k))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "SELECT {} FROM {} ORDER BY {order}",
            self.column_list(),
            quote(&self.name)
        )
    }

    /// The first column whose type the copy cannot carry.
    pub fn unsupported(&self) -> Option<(&str, &str)> {
        self.columns.iter().find_map(|c| match &c.kind {
            Kind::Unsupported(t) => Some((c.name.as_str(), t.as_str())),
            _ => None,
        })
    }
}

/// An identifier quoted for both backends.
pub fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

fn kind_of(t: &ColumnType) -> Kind {
    match t {
        ColumnType::TinyInteger | ColumnType::SmallInteger => Kind::I16,
        ColumnType::Integer => Kind::I32,
        ColumnType::BigInteger => Kind::I64,
        ColumnType::Boolean => Kind::Bool,
        ColumnType::Double => Kind::F64,
        ColumnType::Char(_)
        | ColumnType::String(_)
        | ColumnType::Text
        | ColumnType::Enum { .. } => Kind::Text,
        ColumnType::Binary(_) | ColumnType::VarBinary(_) | ColumnType::Blob => Kind::Bytes,
        ColumnType::TimestampWithTimeZone => Kind::Time,
        other => Kind::Unsupported(format!("{other:?}")),
    }
}
