//! The console's errors, each chosen here: the console's shape is the
//! platform's (`keel_platform::console`), shared with the areas services
//! add.

use keel_platform::console::{Error, code};

use crate::domain::operators::OperatorError;
use crate::domain::sign_in::SignInError;

pub use keel_platform::console::{invalid, not_found, render};

impl From<SignInError> for Error {
    fn from(e: SignInError) -> Self {
        match e {
            SignInError::Refused => Error::unauthorized(
                code::BAD_CREDENTIALS,
                "The name, password or code is wrong.",
            ),
            SignInError::Throttled(t) => Error::from(t),
            SignInError::Secret => Error::internal("an operator's TOTP secret cannot be opened"),
            SignInError::Db(db) => Error::from(db),
        }
    }
}

impl From<OperatorError> for Error {
    fn from(e: OperatorError) -> Self {
        match e {
            OperatorError::NotFound(_) => not_found("operator"),
            OperatorError::Exists(_) => Error::conflict(code::CONFLICT, capitalised(&e)),
            OperatorError::BadName
            | OperatorError::UnknownRole(_)
            | OperatorError::Guessable(_) => invalid(capitalised(&e)),
            OperatorError::Hash(h) => Error::internal(h),
            OperatorError::Secret(c) => Error::internal(c),
            OperatorError::Db(db) => Error::from(db),
        }
    }
}

fn capitalised(e: &impl std::fmt::Display) -> String {
    let text = e.to_string();
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        format!("{}{}.", c.to_uppercase(), chars.as_str())
    })
}
