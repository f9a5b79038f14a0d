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

    /// Passkeys are not configured on this server.
    pub PasskeysOff {
        404 => format!("{PASSKEYS_DISABLED}: passkeys are not configured on this server"),
    }

    /// Passkey sign-in steps from one address over the sign-in limit.
    pub PasskeyLimit {
        429 => format!("{TOO_MANY_REQUESTS}: too many passkey sign-ins from this address this minute; Retry-After"),
    }

    /// The person's proof (password, and a code when two-factor is on)
    /// refused; wrong ones count towards the two-factor lockout.
    pub ProofRefused {
        400 => format!("{VALIDATION_ERROR} (no password, or a malformed path id: {INVALID_ID}), {INVALID_PASSWORD}, {TWO_FACTOR_REQUIRED} (two-factor is on and no code came) or {INVALID_CODE}"),
        429 => format!("{TOO_MANY_ATTEMPTS}: too many wrong passwords or codes; or {TOO_MANY_REQUESTS}: too many password checks from this address, or for this user, this minute (Retry-After)"),
    }
}
