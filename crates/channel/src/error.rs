//! The channel's error shapes. channel-api answers tRPC's error envelope,
//! `{"error":{"message","code":<JSON-RPC>,"data":{"code":"<KEY>","httpStatus":N,"path"}}}`;
//! channel-web a small HTML page.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use keel_platform::http::{ApiError, PlatformError, WireShape};
use serde::Serialize;
use serde_json::{Map, Value};

/// tRPC's error keys with their HTTP status and JSON-RPC code.
pub const CODES: &[(&str, u16, i32)] = &[
    ("PARSE_ERROR", 400, -32700),
    ("BAD_REQUEST", 400, -32600),
    ("UNAUTHORIZED", 401, -32001),
    ("PAYMENT_REQUIRED", 402, -32002),
    ("FORBIDDEN", 403, -32003),
    ("NOT_FOUND", 404, -32004),
    ("METHOD_NOT_SUPPORTED", 405, -32005),
    ("TIMEOUT", 408, -32008),
    ("CONFLICT", 409, -32009),
    ("PRECONDITION_FAILED", 412, -32012),
    ("PAYLOAD_TOO_LARGE", 413, -32013),
    ("UNSUPPORTED_MEDIA_TYPE", 415, -32015),
    ("UNPROCESSABLE_CONTENT", 422, -32022),
    ("PRECONDITION_REQUIRED", 428, -32028),
    ("TOO_MANY_REQUESTS", 429, -32029),
    ("CLIENT_CLOSED_REQUEST", 499, -32099),
    ("INTERNAL_SERVER_ERROR", 500, -32603),
    ("NOT_IMPLEMENTED", 501, -32603),
    ("BAD_GATEWAY", 502, -32603),
    ("SERVICE_UNAVAILABLE", 503, -32603),
    ("GATEWAY_TIMEOUT", 504, -32603),
];

/// The JSON-RPC code of a tRPC key.
pub fn rpc_code(key: &str) -> i32 {
    CODES
        .iter()
        .find(|(k, _, _)| *k == key)
        .map_or(-32603, |(_, _, rpc)| *rpc)
}

/// channel-api's wire shape.
pub struct Trpc;

pub type Error = ApiError<Trpc>;

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: ErrorShape,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorShape {
    pub message: String,
    /// JSON-RPC 2.0 code.
    pub code: i32,
    pub data: ErrorData,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorData {
    pub code: String,
    pub http_status: u16,
    /// The procedure, when the error belongs to one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl WireShape for Trpc {
    fn platform_code(e: &PlatformError) -> &'static str {
        match e {
            PlatformError::NotFound => "NOT_FOUND",
            PlatformError::MethodNotAllowed => "METHOD_NOT_SUPPORTED",
            PlatformError::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            PlatformError::UnsupportedMediaType(_) => "UNSUPPORTED_MEDIA_TYPE",
            PlatformError::BadRequest(_) => "PARSE_ERROR",
            PlatformError::Timeout => "TIMEOUT",
            PlatformError::Internal => "INTERNAL_SERVER_ERROR",
            // tRPC has no 507: the client is told to come back later.
            PlatformError::Unavailable | PlatformError::StorageFull | PlatformError::Starting => {
                "SERVICE_UNAVAILABLE"
            }
        }
    }

    /// A wrong field of a body is a BAD_REQUEST naming it.
    fn input_error(e: keel_platform::http::input::InputError) -> Error {
        match e {
            keel_platform::http::input::InputError::Field { path, problem } if !path.is_empty() => {
                trpc("BAD_REQUEST", format!("{path}: {problem}")).with("field", path)
            }
            other => Error::from(other.into_platform()),
        }
    }

    fn body(status: StatusCode, code: &str, message: &str, data: &Map<String, Value>) -> Value {
        serde_json::to_value(ErrorBody {
            error: ErrorShape {
                message: message.to_owned(),
                code: rpc_code(code),
                data: ErrorData {
                    code: code.to_owned(),
                    http_status: status.as_u16(),
                    path: data.get("path").and_then(Value::as_str).map(str::to_owned),
                },
            },
        })
        .unwrap_or(Value::Null)
    }
}

/// A tRPC error with its key's HTTP status.
pub fn trpc(key: &'static str, message: impl Into<String>) -> Error {
    let status = CODES
        .iter()
        .find(|(k, _, _)| *k == key)
        .and_then(|(_, s, _)| StatusCode::from_u16(*s).ok())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    Error::api(status, key, message)
}

/// Renders platform errors for channel-api.
pub fn render_api(e: PlatformError) -> Response {
    keel_platform::http::api_error::render::<Trpc>(e)
}

/// channel-web's wire shape: an HTML page with the status and message.
pub struct Page;

pub type PageError = ApiError<Page>;

impl WireShape for Page {
    fn platform_code(_e: &PlatformError) -> &'static str {
        ""
    }

    fn body(_status: StatusCode, _code: &str, message: &str, _data: &Map<String, Value>) -> Value {
        Value::from(message)
    }

    fn respond(status: StatusCode, body: Value) -> Response {
        page(status, body.as_str().unwrap_or_default())
    }
}

/// A small HTML error page.
pub fn page(status: StatusCode, message: &str) -> Response {
    let title = status.canonical_reason().unwrap_or("Error");
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{code} {title}</h1><p>{message}</p></body></html>",
        code = status.as_u16(),
        message = escape(message),
    );
    (status, Html(body)).into_response()
}

/// Renders platform errors for channel-web.
pub fn render_web(e: PlatformError) -> Response {
    keel_platform::http::api_error::render::<Page>(e)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl From<crate::getstream::ProviderError> for Error {
    fn from(e: crate::getstream::ProviderError) -> Self {
        match &e {
            crate::getstream::ProviderError::NotConfigured(missing) => {
                trpc("PRECONDITION_FAILED", e.to_string()).with("missing", missing.clone())
            }
            crate::getstream::ProviderError::Failed(_) => trpc("BAD_GATEWAY", e.to_string()),
            crate::getstream::ProviderError::Unreachable(cause) => {
                // Answered as the provider's failure; its cause is logged here.
                tracing::warn!(cause = %keel_platform::failure::chain(cause), "{e}");
                trpc("BAD_GATEWAY", e.to_string())
            }
            crate::getstream::ProviderError::Signing(_) => Error::internal(e),
        }
    }
}

impl From<crate::domain::panels::PanelError> for Error {
    fn from(e: crate::domain::panels::PanelError) -> Self {
        use crate::domain::panels::PanelError;
        match e {
            PanelError::NotFound(_) => trpc("NOT_FOUND", e.to_string()),
            PanelError::TooMany | PanelError::NotAPermutation => trpc("BAD_REQUEST", e.to_string()),
            PanelError::Db(db) => Error::from(db),
        }
    }
}

impl From<crate::domain::channel::UpdateError> for Error {
    fn from(e: crate::domain::channel::UpdateError) -> Self {
        use crate::domain::channel::UpdateError;
        match e {
            UpdateError::TooManyLinks => {
                trpc("BAD_REQUEST", e.to_string()).with("field", "socialLinks")
            }
            UpdateError::Db(db) => Error::from(db),
        }
    }
}
