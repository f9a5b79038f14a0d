//! The usage-alerts error shape: `{"error": "..."}`, and the service's
//! named errors (`Missing required field: <field>` among them).

use axum::http::StatusCode;
use keel_platform::http::input::InputError;
use keel_platform::http::{ApiError, PlatformError, WireShape};

use crate::domain::event::HistoryError;
use crate::domain::values::FieldError;
use serde::Serialize;
use serde_json::{Map, Value};

/// The usage-alerts wire shape.
pub struct Wire;

pub type Error = ApiError<Wire>;

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: String,
}

impl WireShape for Wire {
    /// The shape has no code; the message is the whole answer.
    fn platform_code(_e: &PlatformError) -> &'static str {
        ""
    }

    fn platform_message(e: &PlatformError) -> String {
        match e {
            PlatformError::NotFound => "Not found".to_owned(),
            other => other.message(),
        }
    }

    fn body(_status: StatusCode, _code: &str, message: &str, _data: &Map<String, Value>) -> Value {
        serde_json::to_value(ErrorBody {
            error: message.to_owned(),
        })
        .unwrap_or(Value::Null)
    }

    /// A field of the wrong type or value: `Invalid field: <field> <problem>`.
    fn input_error(e: InputError) -> Error {
        match e {
            InputError::Field { path, problem } if !path.is_empty() => invalid(&path, &problem),
            other => Error::from(other.into_platform()),
        }
    }
}

/// An error answer with `status` and this message.
pub fn status(status: StatusCode, message: impl Into<String>) -> Error {
    Error::api(status, "", message)
}

pub fn bad_request(message: impl Into<String>) -> Error {
    status(StatusCode::BAD_REQUEST, message)
}

pub fn unauthorized() -> Error {
    status(StatusCode::UNAUTHORIZED, "Unauthorized")
}

/// A body that is not `application/json`.
pub fn not_json_content() -> Error {
    bad_request("Content-Type must be application/json")
}

/// A body that is JSON but not an object.
pub fn not_an_object() -> Error {
    bad_request("Request body must be a JSON object")
}

/// A body that is not JSON at all.
pub fn not_json(e: &serde_json::Error) -> Error {
    bad_request(format!("Request body is not valid JSON: {e}"))
}

/// A body holding U+0000.
pub fn nul_refused() -> Error {
    bad_request(keel_platform::http::input::NUL_REFUSED)
}

pub fn no_such_device() -> Error {
    status(StatusCode::NOT_FOUND, "Device not found")
}

/// The documented message for an absent (or blank) required field.
pub fn missing(field: &str) -> Error {
    Error::from(FieldError::Missing(field.to_owned()))
}

pub fn invalid(field: &str, problem: &str) -> Error {
    Error::from(FieldError::invalid(field, problem))
}

impl From<FieldError> for Error {
    fn from(e: FieldError) -> Self {
        bad_request(e.to_string())
    }
}

impl From<HistoryError> for Error {
    fn from(e: HistoryError) -> Self {
        match e {
            HistoryError::Db(db) => Error::from(db),
            HistoryError::Write(w) => Error::internal(w),
        }
    }
}

/// Renders platform errors for this service.
pub fn render(e: PlatformError) -> axum::response::Response {
    keel_platform::http::api_error::render::<Wire>(e)
}
