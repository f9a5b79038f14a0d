//! The fields a body's type requires, as its own OpenAPI schema says: a
//! service that checks presence before format (usage-alerts: `Missing
//! required field`) reads the list from the type, so it is written once,
//! where the document gets it too.

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

/// A body type that knows its required fields, read from its schema once
/// (the first request) and kept for the process: [`required_fields!`]
/// implements it.
///
/// [`required_fields!`]: crate::required_fields
pub trait RequiredFields {
    /// The required properties in the order the schema lists them (the
    /// fields' order).
    fn required_fields() -> &'static [String];
}

/// `T`'s required properties as its schema lists them; empty when `T` is
/// not an object.
pub fn schema_required<T: utoipa::PartialSchema>() -> Vec<String> {
    match T::schema() {
        RefOr::T(Schema::Object(o)) => o.required,
        _ => Vec::new(),
    }
}

/// Implements [`RequiredFields`] for each type named, from its schema,
/// kept in a static of its own (no lookup per request).
#[macro_export]
macro_rules! required_fields {
    ($($t:ty),+ $(,)?) => {
        $(
            impl $crate::values::RequiredFields for $t {
                fn required_fields() -> &'static [String] {
                    static FIELDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
                    FIELDS.get_or_init($crate::values::schema_required::<$t>)
                }
            }
        )+
    };
}
