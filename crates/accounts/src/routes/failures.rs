//! Failure answers several routes share, documented once: each route lists
//! these by name in its `responses(...)` beside its own.

use crate::error::code::*;

keel_platform::failures! {
    /// A goal id that is malformed or names none of this user's goals.
    pub NoSuchGoal {
        400 => format!("{INVALID_ID}: not a goal id"),
        404 => "No such goal of this user",
    }

    /// The user holds the most goals of this kind.
    pub GoalLimit {
        409 => GOAL_LIMIT_REACHED,
    }

    /// A field is missing or invalid.
    pub Invalid {
        400 => format!("{VALIDATION_ERROR}: a field is missing or invalid (named in the message)"),
    }

    /// The user is banned.
    pub Banned {
        403 => ACCOUNT_BANNED,
    }

    /// A two-factor code refused.
    pub CodeRefused {
        400 => format!("{VALIDATION_ERROR} (no code) or {INVALID_CODE}"),
        429 => format!("{TOO_MANY_ATTEMPTS}: too many wrong codes"),
    }
}
