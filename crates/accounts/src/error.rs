//! The accounts error shape, `{"code": "UPPER_SNAKE", "message": "..."}`,
//! and the one place where an error's status and code are chosen: the
//! domain's errors are mapped here, and the edge's own are made here.

use axum::http::StatusCode;
use keel_platform::http::input::InputError;
use keel_platform::http::{ApiError, PlatformError, WireShape};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::domain::auth::AuthError;
use crate::domain::deletion::DeletionError;
use crate::domain::email::EmailChangeError;
use crate::domain::fields::Invalid;
use crate::domain::goals::GoalError;
use crate::domain::notifications::UnsubscribeError;
use crate::domain::passkey_ceremonies::CeremonyError;
use crate::domain::passkey_sign_in::SignInError;
use crate::domain::passkeys::PasskeyError;
use crate::domain::profile::ProfileError;
use crate::domain::proof::ProofError;
use crate::domain::sessions::SessionError;
use crate::domain::two_factor::TwoFactorError;
use crate::domain::users::UserError;
use crate::id::InvalidId;

/// The accounts wire shape.
pub struct Wire;

pub type Error = ApiError<Wire>;

/// The error codes of the API, as the mapping below and the OpenAPI
/// document both name them.
pub mod code {
    pub const VALIDATION_ERROR: &str = "VALIDATION_ERROR";
    pub const INVALID_ID: &str = "INVALID_ID";
    pub const UNAUTHORIZED: &str = "UNAUTHORIZED";
    pub const NOT_FOUND: &str = "NOT_FOUND";
    pub const ACCOUNT_BANNED: &str = "ACCOUNT_BANNED";
    pub const INVALID_CREDENTIALS: &str = "INVALID_CREDENTIALS";
    pub const TWO_FACTOR_REQUIRED: &str = "TWO_FACTOR_REQUIRED";
    pub const INVALID_CODE: &str = "INVALID_CODE";
    pub const INVALID_TOKEN: &str = "INVALID_TOKEN";
    pub const INVALID_PASSWORD: &str = "INVALID_PASSWORD";
    pub const USERNAME_TAKEN: &str = "USERNAME_TAKEN";
    pub const EMAIL_TAKEN: &str = "EMAIL_TAKEN";
    pub const EMAIL_CHANGE_NOT_PENDING: &str = "EMAIL_CHANGE_NOT_PENDING";
    pub const GOAL_LIMIT_REACHED: &str = "GOAL_LIMIT_REACHED";
    pub const TWO_FACTOR_ALREADY_ENABLED: &str = "TWO_FACTOR_ALREADY_ENABLED";
    pub const TWO_FACTOR_NOT_ENABLED: &str = "TWO_FACTOR_NOT_ENABLED";
    pub const TWO_FACTOR_NOT_PENDING: &str = "TWO_FACTOR_NOT_PENDING";
    pub const TOO_MANY_ATTEMPTS: &str = "TOO_MANY_ATTEMPTS";
    pub const TOO_MANY_REQUESTS: &str = "TOO_MANY_REQUESTS";
    pub const PASSKEYS_DISABLED: &str = "PASSKEYS_DISABLED";
    pub const INVALID_CEREMONY: &str = "INVALID_CEREMONY";
    pub const PASSKEY_REJECTED: &str = "PASSKEY_REJECTED";
    pub const PASSKEY_ALREADY_REGISTERED: &str = "PASSKEY_ALREADY_REGISTERED";
    pub const PASSKEY_LIMIT_REACHED: &str = "PASSKEY_LIMIT_REACHED";
}

use code::*;

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Machine-readable, UPPER_SNAKE.
    pub code: String,
    pub message: String,
}

impl WireShape for Wire {
    fn platform_code(e: &PlatformError) -> &'static str {
        match e {
            PlatformError::NotFound => NOT_FOUND,
            PlatformError::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            PlatformError::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            PlatformError::UnsupportedMediaType(_) => "UNSUPPORTED_MEDIA_TYPE",
            PlatformError::BadRequest(_) => "BAD_REQUEST",
            PlatformError::Timeout => "REQUEST_TIMEOUT",
            PlatformError::Internal => "INTERNAL_ERROR",
            PlatformError::Unavailable | PlatformError::Starting => "SERVICE_UNAVAILABLE",
            PlatformError::StorageFull => "INSUFFICIENT_STORAGE",
            PlatformError::TooManyAttempts(_) => TOO_MANY_REQUESTS,
        }
    }

    fn body(_status: StatusCode, code: &str, message: &str, _data: &Map<String, Value>) -> Value {
        serde_json::to_value(ErrorBody {
            code: code.to_owned(),
            message: message.to_owned(),
        })
        .unwrap_or(Value::Null)
    }

    /// A field of the wrong type is a `VALIDATION_ERROR` naming the field.
    fn input_error(e: InputError) -> Error {
        match e {
            InputError::Field { path, problem } if !path.is_empty() => {
                Error::from(Invalid::new(&path, format!("is invalid: {problem}")))
            }
            other => Error::from(other.into_platform()),
        }
    }
}

/// 401 `UNAUTHORIZED` with `message`.
fn unauthorized(message: impl Into<String>) -> Error {
    Error::unauthorized(UNAUTHORIZED, message)
}

fn not_found(what: &str) -> Error {
    Error::not_found(NOT_FOUND, format!("{what} not found"))
}

fn too_many(code: &'static str, message: impl Into<String>, retry_after_secs: u64) -> Error {
    Error::too_many(code, message).retry_after(retry_after_secs)
}

/// No `Authorization: Bearer` header.
pub fn no_token() -> Error {
    unauthorized("A bearer access token is required")
}

pub fn token_expired() -> Error {
    unauthorized("The access token has expired")
}

pub fn token_invalid() -> Error {
    unauthorized("The access token is invalid")
}

/// The token's session was revoked or has expired.
pub fn session_ended() -> Error {
    unauthorized("The session has ended")
}

pub fn banned() -> Error {
    Error::forbidden(ACCOUNT_BANNED, "This account is banned")
}

/// No live session of this user has the id.
pub fn no_such_session() -> Error {
    not_found("Session")
}

/// Over a sign-in or registration limit.
pub fn too_many_attempts(retry_after_secs: u64) -> Error {
    too_many(
        TOO_MANY_REQUESTS,
        "Too many attempts; try again in a minute",
        retry_after_secs,
    )
}

/// No app of this platform is configured for passkeys.
pub fn no_association(platform: &str) -> Error {
    not_found(&format!("{platform} app association"))
}

/// Over the exports a user may ask for in an hour.
pub fn too_many_exports(retry_after_secs: u64) -> Error {
    too_many(
        TOO_MANY_REQUESTS,
        "Too many exports; try again later",
        retry_after_secs,
    )
}

/// Renders platform errors for this service.
pub fn render(e: PlatformError) -> axum::response::Response {
    keel_platform::http::api_error::render::<Wire>(e)
}

impl From<Invalid> for Error {
    fn from(e: Invalid) -> Self {
        Error::bad_request(VALIDATION_ERROR, e.to_string())
    }
}

impl From<InvalidId> for Error {
    fn from(e: InvalidId) -> Self {
        Error::bad_request(INVALID_ID, e.to_string())
    }
}

impl From<UserError> for Error {
    fn from(e: UserError) -> Self {
        match e {
            UserError::NotFound => not_found("User"),
            UserError::UsernameTaken => Error::conflict(USERNAME_TAKEN, e.to_string()),
            UserError::EmailTaken => Error::conflict(EMAIL_TAKEN, e.to_string()),
            UserError::Db(db) => Error::from(db),
        }
    }
}

impl From<GoalError> for Error {
    fn from(e: GoalError) -> Self {
        match e {
            GoalError::NotFound => not_found("Goal"),
            GoalError::NoSuchYearly => not_found("Yearly goal"),
            GoalError::NoSuchWeekly => not_found("Weekly goal"),
            GoalError::NotLinked => Error::not_found(NOT_FOUND, e.to_string()),
            GoalError::LimitReached => Error::conflict(GOAL_LIMIT_REACHED, e.to_string()),
            GoalError::Writer(w) => Error::internal(w),
            GoalError::Db(db) => Error::from(db),
        }
    }
}

impl From<SessionError> for Error {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::InvalidRefresh | SessionError::RefreshReused => {
                unauthorized(e.to_string())
            }
            SessionError::Banned => banned(),
            SessionError::User(u) => Error::from(u),
            SessionError::Issue(cause) => Error::internal(cause),
            SessionError::Db(db) => Error::from(db),
        }
    }
}

impl From<TwoFactorError> for Error {
    fn from(e: TwoFactorError) -> Self {
        match e {
            TwoFactorError::AlreadyEnabled => {
                Error::conflict(TWO_FACTOR_ALREADY_ENABLED, e.to_string())
            }
            TwoFactorError::NotEnabled => Error::conflict(TWO_FACTOR_NOT_ENABLED, e.to_string()),
            TwoFactorError::NoBackupCodes => {
                Error::forbidden(TWO_FACTOR_NOT_ENABLED, e.to_string())
            }
            TwoFactorError::NotPending => Error::conflict(TWO_FACTOR_NOT_PENDING, e.to_string()),
            TwoFactorError::InvalidCode => Error::bad_request(INVALID_CODE, e.to_string()),
            TwoFactorError::Locked { retry_after_secs } => {
                too_many(TOO_MANY_ATTEMPTS, e.to_string(), retry_after_secs)
            }
            TwoFactorError::Secret(cause) => Error::internal(cause),
            TwoFactorError::Db(db) => Error::from(db),
        }
    }
}

impl From<AuthError> for Error {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::InvalidCredentials => {
                Error::unauthorized(INVALID_CREDENTIALS, e.to_string())
            }
            AuthError::Banned => banned(),
            AuthError::TwoFactorRequired => Error::unauthorized(TWO_FACTOR_REQUIRED, e.to_string()),
            // At login a wrong second factor is a failed sign-in: 401.
            AuthError::InvalidCode => Error::unauthorized(INVALID_CODE, e.to_string()),
            AuthError::TwoFactor(t) => Error::from(t),
            AuthError::User(u) => Error::from(u),
            AuthError::InvalidToken => Error::bad_request(INVALID_TOKEN, e.to_string()),
            AuthError::Session(s) => Error::from(s),
            AuthError::Throttled(t) => Error::from(t),
            AuthError::Hash(h) => Error::internal(h),
            AuthError::Db(db) => Error::from(db),
        }
    }
}

impl From<EmailChangeError> for Error {
    fn from(e: EmailChangeError) -> Self {
        match e {
            EmailChangeError::Invalid(i) => Error::from(i),
            EmailChangeError::Taken => Error::conflict(EMAIL_TAKEN, e.to_string()),
            EmailChangeError::NotPending => {
                Error::conflict(EMAIL_CHANGE_NOT_PENDING, e.to_string())
            }
            EmailChangeError::TooSoon { retry_after_secs } => {
                too_many(TOO_MANY_REQUESTS, e.to_string(), retry_after_secs)
            }
            EmailChangeError::InvalidToken => Error::bad_request(INVALID_TOKEN, e.to_string()),
            EmailChangeError::Db(db) => Error::from(db),
        }
    }
}

impl From<ProfileError> for Error {
    fn from(e: ProfileError) -> Self {
        match e {
            ProfileError::WrongPassword => Error::bad_request(INVALID_PASSWORD, e.to_string()),
            ProfileError::Invalid(i) => Error::from(i),
            ProfileError::UsernameTaken => Error::conflict(USERNAME_TAKEN, e.to_string()),
            ProfileError::Throttled(t) => Error::from(t),
            ProfileError::Hash(h) => Error::internal(h),
            ProfileError::Db(db) => Error::from(db),
        }
    }
}

impl From<ProofError> for Error {
    fn from(e: ProofError) -> Self {
        match e {
            ProofError::WrongPassword => Error::bad_request(INVALID_PASSWORD, e.to_string()),
            ProofError::TwoFactorRequired => Error::bad_request(TWO_FACTOR_REQUIRED, e.to_string()),
            ProofError::TwoFactor(t) => Error::from(t),
            ProofError::Throttled(t) => Error::from(t),
            ProofError::Db(db) => Error::from(db),
        }
    }
}

impl From<DeletionError> for Error {
    fn from(e: DeletionError) -> Self {
        match e {
            DeletionError::Proof(p) => Error::from(p),
            DeletionError::Db(db) => Error::from(db),
        }
    }
}

impl From<UnsubscribeError> for Error {
    fn from(e: UnsubscribeError) -> Self {
        match e {
            UnsubscribeError::BadToken(t) => Error::bad_request(INVALID_TOKEN, t.to_string()),
            UnsubscribeError::Db(db) => Error::from(db),
        }
    }
}

impl From<PasskeyError> for Error {
    fn from(e: PasskeyError) -> Self {
        match e {
            PasskeyError::Disabled => Error::not_found(PASSKEYS_DISABLED, e.to_string()),
            PasskeyError::NoCeremony => Error::bad_request(INVALID_CEREMONY, e.to_string()),
            PasskeyError::Rejected(_) => Error::bad_request(PASSKEY_REJECTED, e.to_string()),
            PasskeyError::AlreadyRegistered => {
                Error::conflict(PASSKEY_ALREADY_REGISTERED, e.to_string())
            }
            PasskeyError::LimitReached => Error::conflict(PASSKEY_LIMIT_REACHED, e.to_string()),
            PasskeyError::NotFound => not_found("Passkey"),
            PasskeyError::Proof(p) => Error::from(p),
            PasskeyError::Webauthn(w) => Error::internal(w),
            PasskeyError::Encode(e) => Error::internal(e),
            PasskeyError::Ceremony(CeremonyError::Db(db)) | PasskeyError::Db(db) => Error::from(db),
            PasskeyError::Ceremony(c) => Error::internal(c),
        }
    }
}

impl From<SignInError> for Error {
    fn from(e: SignInError) -> Self {
        match e {
            // A passkey that does not prove the person is a failed sign-in,
            // as a wrong password is.
            SignInError::Refused(_) | SignInError::UnknownPasskey => {
                Error::unauthorized(INVALID_CREDENTIALS, e.to_string())
            }
            SignInError::Banned => banned(),
            SignInError::Passkey(p) => Error::from(p),
            SignInError::Session(s) => Error::from(s),
        }
    }
}

/// The console's users area answers in the console's shape.
impl From<UserError> for keel_platform::console::Error {
    fn from(e: UserError) -> Self {
        match e {
            UserError::NotFound => keel_platform::console::not_found("user"),
            UserError::Db(db) => Self::from(db),
            other => Self::conflict(keel_platform::console::code::CONFLICT, other.to_string()),
        }
    }
}

impl From<TwoFactorError> for keel_platform::console::Error {
    fn from(e: TwoFactorError) -> Self {
        use keel_platform::console::code::CONFLICT;
        match e {
            TwoFactorError::NotEnabled => {
                Self::conflict(CONFLICT, "This user has no second factor.")
            }
            TwoFactorError::Secret(cause) => Self::internal(cause),
            TwoFactorError::Db(db) => Self::from(db),
            other => Self::conflict(CONFLICT, other.to_string()),
        }
    }
}

impl From<PasskeyError> for keel_platform::console::Error {
    fn from(e: PasskeyError) -> Self {
        match e {
            PasskeyError::NotFound => keel_platform::console::not_found("passkey"),
            PasskeyError::Db(db) => Self::from(db),
            other => Self::internal(other.to_string()),
        }
    }
}
