//! Values of inline reads: bound as sea-query binds them for sqlx-sqlite,
//! and decoded as sqlx-sqlite decodes them into a column's Rust type.

use rusqlite::types::{Value as Sql, ValueRef};
use sea_orm::Values;
use sea_orm::sea_query::{ColumnType, Value};

use super::Miss;
use crate::db::sqlite_time;

/// The values, bound as sea-query binds them for sqlx-sqlite.
pub(super) fn bind(values: Option<&Values>) -> Result<Vec<Sql>, Miss> {
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
pub(super) enum Kind {
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

/// A stored value that does not decode into its column's type.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum Undecodable {
    #[error("{0:?} for {1:?}")]
    Class(rusqlite::types::Type, Kind),
    #[error(transparent)]
    Utf8(#[from] std::str::Utf8Error),
    #[error("datetime {0:?}")]
    DateTime(String),
}

impl Kind {
    /// The kind of the Rust type SeaORM derives `ct` from.
    pub(super) fn of(ct: &ColumnType) -> Option<Self> {
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
    pub(super) fn decode(self, v: ValueRef<'_>) -> Result<Value, Undecodable> {
        let refused = || Undecodable::Class(v.data_type(), self);
        let int = |v: ValueRef<'_>| match v {
            ValueRef::Integer(i) => Ok(i),
            _ => Err(refused()),
        };
        if matches!(v, ValueRef::Null) {
            return Ok(self.null());
        }
        Ok(match self {
            Self::Text => match v {
                ValueRef::Text(t) => Value::String(Some(std::str::from_utf8(t)?.to_owned())),
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
                    let text = std::str::from_utf8(t)?;
                    Value::ChronoDateTimeUtc(Some(
                        sqlite_time::decode(text)
                            .ok_or_else(|| Undecodable::DateTime(text.to_owned()))?,
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
    fn values_bind_as_sqlx_binds_them() {
        assert!(matches!(
            bind_one(&Value::Bool(Some(true))),
            Ok(Sql::Integer(1))
        ));
        assert!(matches!(bind_one(&Value::Int(None)), Ok(Sql::Null)));
        assert!(matches!(
            bind_one(&Value::BigUnsigned(Some(u64::MAX))),
            Err(Miss::Bind("u64 above i64"))
        ));
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
