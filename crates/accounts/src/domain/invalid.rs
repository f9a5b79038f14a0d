//! A body's field that is missing or invalid, as accounts names it.

/// A field that is missing or invalid: `{field} {problem}`, e.g.
/// "username must be 3 to 30 characters".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} {problem}")]
pub struct Invalid {
    pub field: String,
    pub problem: String,
}

impl Invalid {
    pub fn new(field: &str, problem: impl Into<String>) -> Self {
        Self {
            field: field.to_owned(),
            problem: problem.into(),
        }
    }

    /// A required field that is absent or empty.
    pub fn required(field: &str) -> Self {
        Self::new(field, "is required")
    }
}
