//! A request parameter that is missing or invalid, named as the clients of
//! this API expect: `rest_missing_callback_param` and `rest_invalid_param`
//! (mapped in `error.rs`).

/// A parameter at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// Answered with `data.params` holding `{field: problem}`.
    #[error("Invalid parameter(s): {field}")]
    Invalid { field: String, problem: String },
    /// Answered with `data.params` holding `[field]`.
    #[error("Missing parameter(s): {field}")]
    Missing { field: String },
}

/// `field` is invalid: `problem`.
pub fn invalid(field: &str, problem: &str) -> ParamError {
    ParamError::Invalid {
        field: field.to_owned(),
        problem: problem.to_owned(),
    }
}

/// `field` is required.
pub fn missing(field: &str) -> ParamError {
    ParamError::Missing {
        field: field.to_owned(),
    }
}
