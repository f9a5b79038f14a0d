//! A body's required field as sent, read in accounts' order.
//!
//! accounts answers the first problem of the first field in the order the
//! handler reads them (`username`, then `email`, then `password`), and an
//! absent field before a malformed one: so a body holds each required
//! field as [`Sent<T>`] (the text as sent, absent allowed) and the handler
//! parses them in its order with [`Sent::parse`]. The field's type `T`
//! says once what it accepts: [`Field::parse`] checks it and its schema is
//! the document's (the field is required there because `Sent` is not an
//! `Option`).

use std::marker::PhantomData;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer};
use utoipa::openapi::schema::{ObjectBuilder, Schema};
use utoipa::openapi::{RefOr, Type};

use super::invalid::Invalid;

/// A value a body's field parses into; its schema documents exactly what
/// [`Field::parse`] accepts.
pub trait Field: Sized {
    /// `raw`, present and not empty, as field `field`.
    fn parse(field: &str, raw: String) -> Result<Self, Invalid>;

    /// What the field accepts, for the document.
    fn schema() -> ObjectBuilder;

    /// Whether a number is read as its digits (codes typed as numbers).
    const NUMBER_AS_TEXT: bool = false;
}

/// A required field as sent: absent, or text not yet checked.
pub struct Sent<T>(Option<String>, PhantomData<T>);

impl<T: Field> Sent<T> {
    /// The field's value, or why not: `{field} is required` when absent or
    /// empty, else the type's own refusal.
    pub fn parse(self, field: &str) -> Result<T, Invalid> {
        match self.0 {
            Some(raw) if !raw.is_empty() => T::parse(field, raw),
            _ => Err(Invalid::required(field)),
        }
    }
}

impl<'de, T: Field> Deserialize<'de> for Sent<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = d.deserialize_option(SentVisitor::<T>(PhantomData))?;
        Ok(Self(raw, PhantomData))
    }
}

/// Reads text, `null` or nothing as absent, and a number as its digits
/// when the field's type says so; anything else is refused by serde's own
/// words ("invalid type: integer `5`, expected a string").
struct SentVisitor<T>(PhantomData<T>);

impl<'de, T: Field> Visitor<'de> for SentVisitor<T> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        if T::NUMBER_AS_TEXT {
            Ok(Some(v.to_string()))
        } else {
            Err(E::invalid_type(de::Unexpected::Unsigned(v), &self))
        }
    }
}

impl<T: Field> utoipa::__dev::ComposeSchema for Sent<T> {
    fn compose(_: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        T::schema().into()
    }
}

impl<T: Field> utoipa::ToSchema for Sent<T> {}

/// Documents each [`Field`] type named by its own schema: the body's
/// derive asks `ToSchema` of a type argument, and a field type has no
/// schema but its [`Field::schema`].
macro_rules! documented_fields {
    ($($t:ty),+ $(,)?) => {
        $(
            impl utoipa::__dev::ComposeSchema for $t {
                fn compose(
                    _: Vec<utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>>,
                ) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                    <$t as $crate::domain::sent::Field>::schema().into()
                }
            }

            impl utoipa::ToSchema for $t {}
        )+
    };
}
pub(crate) use documented_fields;

documented_fields!(Given, Code);

/// A string of at least one character.
pub fn filled() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
}

/// Any text that is present: a current password, a login, a token. Its
/// check is what it is compared with, not a rule of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given(String);

impl Given {
    pub fn into_string(self) -> String {
        self.0
    }
}

impl Field for Given {
    fn parse(_: &str, raw: String) -> Result<Self, Invalid> {
        Ok(Self(raw))
    }

    fn schema() -> ObjectBuilder {
        filled()
    }
}

/// A one-time code: from the authenticator app, or a backup code; a number
/// is read as its digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code(String);

impl Code {
    pub fn into_string(self) -> String {
        self.0
    }
}

impl Field for Code {
    const NUMBER_AS_TEXT: bool = true;

    fn parse(_: &str, raw: String) -> Result<Self, Invalid> {
        Ok(Self(raw))
    }

    fn schema() -> ObjectBuilder {
        filled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Body {
        login: Sent<Given>,
        code: Sent<Code>,
    }

    #[test]
    fn an_absent_field_is_named_as_required() {
        let body: Body = serde_json::from_str(r#"{"code": 123456}"#).unwrap();
        assert_eq!(body.login.parse("login"), Err(Invalid::required("login")));
        assert_eq!(
            body.code.parse("code").map(Code::into_string),
            Ok("123456".into())
        );
    }

    #[test]
    fn an_empty_field_is_as_absent() {
        let body: Body = serde_json::from_str(r#"{"login": "", "code": null}"#).unwrap();
        assert_eq!(body.login.parse("login"), Err(Invalid::required("login")));
        assert_eq!(body.code.parse("code"), Err(Invalid::required("code")));
    }

    #[test]
    fn a_number_is_refused_where_text_is_asked() {
        assert!(serde_json::from_str::<Body>(r#"{"login": 5, "code": "1"}"#).is_err());
    }
}
