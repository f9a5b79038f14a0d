//! The accounts error shape: `{"code": "UPPER_SNAKE", "message": "..."}`,
//! and the service's named errors.

use axum::http::StatusCode;
use keel_platform::http::input::InputError;
use keel_platform::http::{ApiError, PlatformError, WireShape};
use serde::Serialize;
use serde_json::{Map, Value};

/// The accounts wire shape.
pub struct Wire;

pub type Error = ApiError<Wire>;

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Machine-readable, UPPER_SNAKE.
    pub code: String,
    pub message: String,
}

impl WireShape for Wire {
    fn platform_code(e: &PlatformError) -> &'static str {
        match e {
            PlatformError::NotFound => "NOT_FOUND",
            PlatformError::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            PlatformError::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            PlatformError::UnsupportedMediaType(_) => "UNSUPPORTED_MEDIA_TYPE",
            PlatformError::BadRequest(_) => "BAD_REQUEST",
            PlatformError::Timeout => "REQUEST_TIMEOUT",
            PlatformError::Internal => "INTERNAL_ERROR",
            PlatformError::Unavailable | PlatformError::Starting => "SERVICE_UNAVAILABLE",
            PlatformError::StorageFull => "INSUFFICIENT_STORAGE",
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
                validation(&path, &format!("is invalid: {problem}"))
            }
            other => Error::from(other.into_platform()),
        }
    }
}

/// 400 `VALIDATION_ERROR`; the message names the field.
pub fn validation(field: &str, problem: &str) -> Error {
    Error::api(
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
        format!("{field} {problem}"),
    )
}

pub fn required(field: &str) -> Error {
    validation(field, "is required")
}

pub fn invalid_id(field: &str) -> Error {
    Error::api(
        StatusCode::BAD_REQUEST,
        "INVALID_ID",
        format!("{field} must be a 24-character hexadecimal id"),
    )
}

pub fn unauthorized(message: &str) -> Error {
    Error::api(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message)
}

pub fn not_found(what: &str) -> Error {
    Error::api(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        format!("{what} not found"),
    )
}

pub fn too_many(code: &'static str, message: &str, retry_after_secs: u64) -> Error {
    Error::api(StatusCode::TOO_MANY_REQUESTS, code, message).retry_after(retry_after_secs)
}

/// Renders platform errors for this service.
pub fn render(e: PlatformError) -> axum::response::Response {
    keel_platform::http::api_error::render::<Wire>(e)
}
