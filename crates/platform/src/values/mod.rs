//! Values as request bodies hold them, read without HTTP (a domain reads
//! them too): the bounded values every service's bodies hold: text of at most
//! `MAX` characters and whole numbers in a range. Each is checked as it is
//! read (a wrong one names the rule, after its field's name) and documents
//! itself in OpenAPI from the same constants, so a limit is written once,
//! in the field's type.
//!
//! How text is kept and worded is the field's [`Rule`]: as sent or
//! trimmed, blank allowed or refused, and the words of a refusal. The
//! rules here are the common ones; a service whose contract words a
//! refusal its own way (`is required`, `must be 1 to 200 characters`)
//! writes its own rule, not its own type.

use std::marker::PhantomData;

mod path_id;
mod required;
pub use path_id::is_uuid;
pub use required::{RequiredFields, schema_required};

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};

/// A value with nothing in it: empty, or only Unicode white space
/// (`char::is_whitespace`); a document says the opposite with
/// [`crate::http::patterns::NOT_BLANK`].
pub fn is_blank(s: &str) -> bool {
    s.chars().all(char::is_whitespace)
}

/// A field of a value that could not be read into its type: its path
/// (`thresholds[0].value`, empty for the whole) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    pub path: String,
    pub problem: String,
}

/// `value` into `T`, naming the failing field.
pub fn read<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, FieldProblem> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        // serde_path_to_error writes `.` for the root and `a.b[0].c` below it.
        let path = e.path().to_string();
        FieldProblem {
            path: if path == "." { String::new() } else { path },
            problem: e.inner().to_string(),
        }
    })
}

/// A whole number as JSON Schema counts one: `12` or `12.0` (serde's
/// integer types refuse the second); a fraction, or a float beyond what
/// a double holds exactly (9e15), is not one.
fn whole_number(n: &serde_json::Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
        .or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i128)
        })
}

/// A [`whole_number`] for `#[serde(deserialize_with)]` on an optional
/// unsigned field; anything else, or a number beyond `T`, is refused.
pub fn whole<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    let Some(n) = Option::<serde_json::Number>::deserialize(d)? else {
        return Ok(None);
    };
    whole_number(&n)
        .and_then(|w| u64::try_from(w).ok())
        .and_then(|w| T::try_from(w).ok())
        .map(Some)
        .ok_or_else(|| D::Error::custom("must be a whole number (not too large)"))
}

/// Why a text value was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not a string (or `null` where the rule does not call it blank).
    NotString,
    /// Empty or only white space, where the rule refuses it.
    Blank,
    /// Longer than the type's `MAX` characters.
    TooLong,
}

impl Refusal {
    /// The common words: `must be a string`, `must not be empty`, `must be
    /// at most {max} characters`.
    pub fn words(self, max: usize) -> String {
        match self {
            Self::NotString => "must be a string".to_owned(),
            Self::Blank => "must not be empty".to_owned(),
            Self::TooLong => format!("must be at most {max} characters"),
        }
    }
}

/// How a [`Text`] field is kept and how its refusals are worded.
pub trait Rule: Send + Sync + 'static {
    /// Blank text (empty or only white space) is refused.
    const NOT_BLANK: bool = false;
    /// `null` counts as blank (else it is not a string).
    const NULL_IS_BLANK: bool = false;
    /// The text is kept without white space at either end (the length is
    /// counted as sent).
    const TRIM: bool = false;

    /// The words of a refusal, after the field's name.
    fn words(refusal: Refusal, max: usize) -> String {
        refusal.words(max)
    }
}

/// Any string of at most `MAX` characters, exactly as sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
pub struct Exact;
impl Rule for Exact {}

/// Not blank, exactly as sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
pub struct Filled;
impl Rule for Filled {
    const NOT_BLANK: bool = true;
}

/// Trimmed; blank is allowed (and kept as the empty string).
#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
pub struct Trimmed;
impl Rule for Trimmed {
    const TRIM: bool = true;
}

/// Not blank, kept trimmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
pub struct NotBlank;
impl Rule for NotBlank {
    const NOT_BLANK: bool = true;
    const TRIM: bool = true;
}

/// Text of at most `MAX` characters (Unicode scalar values, as sent),
/// kept and checked by its rule `R`.
pub struct Text<const MAX: usize, R: Rule = Exact>(String, PhantomData<R>);

impl<const MAX: usize, R: Rule> Text<MAX, R> {
    /// The longest text the type holds, in characters.
    pub const MAX: usize = MAX;

    /// Checks `raw` by the rule and keeps it as the rule says.
    pub fn parse(raw: &str) -> Result<Self, Refusal> {
        Self::check(raw)?;
        Ok(Self(Self::kept(raw).to_owned(), PhantomData))
    }

    /// Checks a JSON value: a string as [`Self::parse`] does, `null` as
    /// blank when the rule says so.
    pub fn from_value(v: Value) -> Result<Self, Refusal> {
        match v {
            Value::String(s) => {
                Self::check(&s)?;
                let kept = if R::TRIM {
                    Self::kept(&s).to_owned()
                } else {
                    s
                };
                Ok(Self(kept, PhantomData))
            }
            Value::Null if R::NULL_IS_BLANK && R::NOT_BLANK => Err(Refusal::Blank),
            _ => Err(Refusal::NotString),
        }
    }

    fn check(raw: &str) -> Result<(), Refusal> {
        if R::NOT_BLANK && is_blank(raw) {
            Err(Refusal::Blank)
        } else if raw.chars().count() > MAX {
            Err(Refusal::TooLong)
        } else {
            Ok(())
        }
    }

    fn kept(raw: &str) -> &str {
        if R::TRIM { raw.trim() } else { raw }
    }

    /// A stored value, trusted as it is.
    pub fn stored(s: String) -> Self {
        Self(s, PhantomData)
    }

    /// The rule's words for a refusal of this type.
    pub fn words(refusal: Refusal) -> String {
        R::words(refusal, MAX)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl<const MAX: usize, R: Rule> Clone for Text<MAX, R> {
    fn clone(&self) -> Self {
        Self(self.0.clone(), PhantomData)
    }
}

impl<const MAX: usize, R: Rule> PartialEq for Text<MAX, R> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<const MAX: usize, R: Rule> Eq for Text<MAX, R> {}

impl<const MAX: usize, R: Rule> std::fmt::Debug for Text<MAX, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<const MAX: usize, R: Rule> Serialize for Text<MAX, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de, const MAX: usize, R: Rule> Deserialize<'de> for Text<MAX, R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::from_value(Value::deserialize(d)?).map_err(|r| D::Error::custom(Self::words(r)))
    }
}

/// The schema of a string; `nullable` adds the type `null`.
pub fn string_schema(nullable: bool) -> ObjectBuilder {
    let t = if nullable {
        SchemaType::from_iter([Type::String, Type::Null])
    } else {
        SchemaType::Type(Type::String)
    };
    ObjectBuilder::new().schema_type(t)
}

/// The schema of a string of at most `max` characters; `not_blank` adds
/// the pattern `\S`, `nullable` the type `null`.
pub fn text_schema(max: usize, not_blank: bool, nullable: bool) -> ObjectBuilder {
    let b = string_schema(nullable).max_length(Some(max));
    if not_blank {
        b.min_length(Some(1)).pattern(Some(r"\S"))
    } else {
        b
    }
}

// A type with a type parameter is documented through utoipa's
// `ComposeSchema` (what its derive writes for generic types, and what a
// deriving body asks of its fields' types); its blanket `PartialSchema`
// follows. A rule is documented by the text's schema: a rule type derives
// `ToSchema` only because the derive asks it of every type argument.
impl<const MAX: usize, R: Rule> utoipa::__dev::ComposeSchema for Text<MAX, R> {
    fn compose(_: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        text_schema(MAX, R::NOT_BLANK, false).into()
    }
}

impl<const MAX: usize, R: Rule> utoipa::ToSchema for Text<MAX, R> {}

/// A value that is not a whole number in a [`Whole`]'s range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("must be an integer from {min} to {max}")]
pub struct OutOfRange {
    pub min: i64,
    pub max: i64,
}

/// A whole number from `MIN` to `MAX`, as JSON Schema counts one (`12` or
/// `12.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Whole<const MIN: i64, const MAX: i64>(i64);

impl<const MIN: i64, const MAX: i64> Whole<MIN, MAX> {
    pub const MIN: i64 = MIN;
    pub const MAX: i64 = MAX;

    /// Checks a JSON value; the refusal names the range.
    pub fn from_value(v: &Value) -> Result<Self, OutOfRange> {
        v.as_number()
            .and_then(whole_number)
            .and_then(|n| i64::try_from(n).ok())
            .filter(|n| (MIN..=MAX).contains(n))
            .map(Self)
            .ok_or(OutOfRange { min: MIN, max: MAX })
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

impl<'de, const MIN: i64, const MAX: i64> Deserialize<'de> for Whole<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::from_value(&Value::deserialize(d)?).map_err(D::Error::custom)
    }
}

impl<const MIN: i64, const MAX: i64> utoipa::PartialSchema for Whole<MIN, MAX> {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Integer))
            .minimum(Some(MIN))
            .maximum(Some(MAX))
            .into()
    }
}

impl<const MIN: i64, const MAX: i64> utoipa::ToSchema for Whole<MIN, MAX> {}

#[cfg(test)]
mod tests;
