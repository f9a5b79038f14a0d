//! Errors the platform itself produces (no route, body too large, timeout,
//! panic, unreadable body). Each service renders them in its own wire shape
//! through its error type's `From<PlatformError>`.

use axum::http::StatusCode;
use axum::response::Response;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlatformError {
    NotFound,
    MethodNotAllowed,
    PayloadTooLarge,
    UnsupportedMediaType(String),
    BadRequest(String),
    Timeout,
    Internal,
    /// A dependency (the database, Redis) is away: 503 with `Retry-After`.
    Unavailable,
    /// The database's storage is full: 507 with `Retry-After`.
    StorageFull,
    /// The process is starting (connecting, migrating): 503 with
    /// `Retry-After`.
    Starting,
    /// Over a door's limit at the guard (`guard::Throttled`): 429 with
    /// `Retry-After` (these seconds).
    TooManyAttempts(u64),
}

impl PlatformError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Timeout => StatusCode::REQUEST_TIMEOUT,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Unavailable | Self::Starting => StatusCode::SERVICE_UNAVAILABLE,
            Self::StorageFull => StatusCode::INSUFFICIENT_STORAGE,
            Self::TooManyAttempts(_) => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// A human-readable message safe to return to a client.
    pub fn message(&self) -> String {
        match self {
            Self::NotFound => "No route matches this path".to_owned(),
            Self::MethodNotAllowed => "This method is not allowed on this path".to_owned(),
            Self::PayloadTooLarge => "The request body is too large".to_owned(),
            Self::UnsupportedMediaType(m) | Self::BadRequest(m) => m.clone(),
            Self::Timeout => "The request took too long".to_owned(),
            Self::Internal => "Internal server error".to_owned(),
            Self::Unavailable => {
                "The service is unavailable for a moment (its database or cache cannot be reached); try again shortly".to_owned()
            }
            Self::StorageFull => "The server's storage is full; nothing was changed. Try again later".to_owned(),
            Self::Starting => {
                "The service is starting (preparing its database); try again shortly".to_owned()
            }
            Self::TooManyAttempts(_) => "Too many attempts; try again in a minute".to_owned(),
        }
    }

    /// How long a client should wait before trying again, in seconds.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Self::Unavailable | Self::Starting => Some(5),
            Self::StorageFull => Some(60),
            Self::TooManyAttempts(secs) => Some((*secs).max(1)),
            _ => None,
        }
    }

    /// Maps an axum extractor rejection (by its status and text).
    pub fn from_rejection(status: StatusCode, text: String) -> Self {
        match status {
            StatusCode::PAYLOAD_TOO_LARGE => Self::PayloadTooLarge,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Self::UnsupportedMediaType(text),
            StatusCode::INTERNAL_SERVER_ERROR => Self::Internal,
            _ => Self::BadRequest(text),
        }
    }
}

/// How a service turns a platform error into its wire shape.
pub type Render = fn(PlatformError) -> Response;
