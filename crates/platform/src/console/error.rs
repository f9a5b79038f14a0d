//! The console's error shape, for the console and for every area a
//! service adds: `{"code": "...", "message": "..."}` (plus what an error
//! adds, e.g. `retry_after`).

use axum::http::StatusCode;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::http::{ApiError, PlatformError, WireShape};

/// The console's wire shape.
pub struct Wire;

pub type Error = ApiError<Wire>;

/// Every console error.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// A stable code, e.g. `not_signed_in`, `forbidden`, `invalid_input`.
    pub code: String,
    /// What went wrong, in words an operator reads.
    pub message: String,
}

/// The console's codes.
pub mod code {
    pub const INVALID_INPUT: &str = "invalid_input";
    pub const NOT_SIGNED_IN: &str = "not_signed_in";
    pub const BAD_CREDENTIALS: &str = "bad_credentials";
    pub const FORBIDDEN: &str = "forbidden";
    pub const CSRF: &str = "csrf_token_invalid";
    pub const NOT_FOUND: &str = "not_found";
    pub const CONFLICT: &str = "conflict";
    pub const THROTTLED: &str = "throttled";
    pub const UNAVAILABLE: &str = "unavailable";
    pub const INTERNAL: &str = "internal_error";
}

impl WireShape for Wire {
    fn platform_code(e: &PlatformError) -> &'static str {
        match e.status() {
            StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => code::NOT_FOUND,
            StatusCode::TOO_MANY_REQUESTS => code::THROTTLED,
            StatusCode::SERVICE_UNAVAILABLE => code::UNAVAILABLE,
            s if s.is_client_error() => code::INVALID_INPUT,
            _ => code::INTERNAL,
        }
    }

    fn body(_status: StatusCode, code: &str, message: &str, data: &Map<String, Value>) -> Value {
        let mut body = Map::new();
        body.insert("code".to_owned(), code.into());
        body.insert("message".to_owned(), message.into());
        for (k, v) in data {
            body.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(body)
    }
}

/// 400 naming what is wrong.
pub fn invalid(message: impl Into<String>) -> Error {
    Error::bad_request(code::INVALID_INPUT, message)
}

/// 404 naming what is not there.
pub fn not_found(what: &str) -> Error {
    Error::not_found(code::NOT_FOUND, format!("No such {what}."))
}

/// Renders the platform's errors in the console's shape.
pub fn render(e: PlatformError) -> axum::response::Response {
    crate::http::api_error::render::<Wire>(e)
}
