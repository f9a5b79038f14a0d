//! The svc error shape, WordPress REST style:
//! `{"code": "...", "message": "...", "data": {"status": N, ...}}`.

use axum::http::StatusCode;
use keel_platform::http::{ApiError, PlatformError, WireShape};
use serde::Serialize;
use serde_json::{Map, Value};

/// The svc wire shape.
pub struct Wire;

pub type Error = ApiError<Wire>;

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
    /// Always holds `status`; some errors add more (e.g. `fields`).
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub data: Map<String, Value>,
}

impl WireShape for Wire {
    fn platform_code(e: &PlatformError) -> &'static str {
        match e {
            PlatformError::NotFound | PlatformError::MethodNotAllowed => "rest_no_route",
            PlatformError::PayloadTooLarge => "rest_payload_too_large",
            PlatformError::UnsupportedMediaType(_) => "rest_unsupported_media_type",
            PlatformError::BadRequest(_) => "rest_invalid_json",
            PlatformError::Timeout => "rest_timeout",
            PlatformError::Internal => "internal_server_error",
            PlatformError::Unavailable | PlatformError::Starting => "rest_service_unavailable",
            PlatformError::StorageFull => "rest_insufficient_storage",
        }
    }

    fn body(status: StatusCode, code: &str, message: &str, data: &Map<String, Value>) -> Value {
        let mut data = data.clone();
        data.insert("status".to_owned(), Value::from(status.as_u16()));
        serde_json::to_value(ErrorBody {
            code: code.to_owned(),
            message: message.to_owned(),
            data,
        })
        .unwrap_or(Value::Null)
    }
}

/// 404 `rest_no_route`, as the host site answers a path it does not serve.
pub fn no_route() -> Error {
    Error::api(
        StatusCode::NOT_FOUND,
        "rest_no_route",
        "No route was found matching the URL and request method.",
    )
}

/// Renders platform errors for this service.
pub fn render(e: PlatformError) -> axum::response::Response {
    keel_platform::http::api_error::render::<Wire>(e)
}
