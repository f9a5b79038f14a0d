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

/// The parameter at fault in a body read into its type: the path's first
/// segment (`target` of `target.device_type`), the rest said in the
/// problem (`device_type must be ios or android`); a value absent, null or
/// blank where one is required (`missing field` from serde, or
/// [`REQUIRED`](crate::domain::values::REQUIRED)) is missing.
pub fn from_field(path: &str, problem: &str) -> ParamError {
    if path.is_empty() {
        return match problem
            .strip_prefix("missing field `")
            .and_then(|r| r.split('`').next())
        {
            Some(field) => missing(field),
            None => invalid("body", problem),
        };
    }
    let cut = path.find(['.', '[']).unwrap_or(path.len());
    let (field, rest) = path.split_at(cut);
    let rest = rest.trim_start_matches('.');
    if rest.is_empty() && problem == crate::domain::values::REQUIRED {
        return missing(field);
    }
    if rest.is_empty() {
        invalid(field, problem)
    } else {
        invalid(field, &format!("{rest} {problem}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fields_path_names_the_parameter() {
        assert_eq!(from_field("", "missing field `title`"), missing("title"));
        assert_eq!(from_field("title", "is required"), missing("title"));
        assert_eq!(
            from_field("title", "must be a string"),
            invalid("title", "must be a string")
        );
        assert_eq!(
            from_field("target.device_type", "must be ios or android"),
            invalid("target", "device_type must be ios or android")
        );
        assert_eq!(from_field("", "oops"), invalid("body", "oops"));
    }
}
