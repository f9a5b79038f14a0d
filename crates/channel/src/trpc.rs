//! The tRPC error envelope of channel-api:
//! `{"error":{"message","code":<JSON-RPC>,"data":{"code":"<KEY>","httpStatus":N,"path"}}}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use keel_platform::http::PlatformError;
use keel_platform::sea_orm::DbErr;
use serde::Serialize;

/// tRPC error keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    ParseError,
    BadRequest,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotSupported,
    Timeout,
    Conflict,
    PayloadTooLarge,
    UnsupportedMediaType,
    UnprocessableContent,
    TooManyRequests,
    InternalServerError,
}

impl Code {
    /// (key, HTTP status, JSON-RPC code)
    pub fn parts(self) -> (&'static str, u16, i32) {
        match self {
            Self::ParseError => ("PARSE_ERROR", 400, -32700),
            Self::BadRequest => ("BAD_REQUEST", 400, -32600),
            Self::Unauthorized => ("UNAUTHORIZED", 401, -32001),
            Self::Forbidden => ("FORBIDDEN", 403, -32003),
            Self::NotFound => ("NOT_FOUND", 404, -32004),
            Self::MethodNotSupported => ("METHOD_NOT_SUPPORTED", 405, -32005),
            Self::Timeout => ("TIMEOUT", 408, -32008),
            Self::Conflict => ("CONFLICT", 409, -32009),
            Self::PayloadTooLarge => ("PAYLOAD_TOO_LARGE", 413, -32013),
            Self::UnsupportedMediaType => ("UNSUPPORTED_MEDIA_TYPE", 415, -32015),
            Self::UnprocessableContent => ("UNPROCESSABLE_CONTENT", 422, -32022),
            Self::TooManyRequests => ("TOO_MANY_REQUESTS", 429, -32029),
            Self::InternalServerError => ("INTERNAL_SERVER_ERROR", 500, -32603),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub code: Code,
    pub message: String,
    pub path: Option<String>,
}

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            path: None,
        }
    }

    #[must_use]
    pub fn at(mut self, path: &str) -> Self {
        self.path = Some(path.to_owned());
        self
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Envelope {
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Error {
    pub fn envelope(&self) -> Envelope {
        let (key, http_status, rpc) = self.code.parts();
        Envelope {
            error: ErrorShape {
                message: self.message.clone(),
                code: rpc,
                data: ErrorData {
                    code: key.to_owned(),
                    http_status,
                    path: self.path.clone(),
                },
            },
        }
    }
}

impl From<PlatformError> for Error {
    fn from(e: PlatformError) -> Self {
        let code = match &e {
            PlatformError::NotFound => Code::NotFound,
            PlatformError::MethodNotAllowed => Code::MethodNotSupported,
            PlatformError::PayloadTooLarge => Code::PayloadTooLarge,
            PlatformError::UnsupportedMediaType(_) => Code::UnsupportedMediaType,
            PlatformError::BadRequest(_) => Code::ParseError,
            PlatformError::Timeout => Code::Timeout,
            PlatformError::Internal => Code::InternalServerError,
        };
        Self::new(code, e.message())
    }
}

impl From<DbErr> for Error {
    fn from(e: DbErr) -> Self {
        tracing::error!(error = %e, "database error");
        Self::new(Code::InternalServerError, "Internal server error")
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.code.parts().1).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(self.envelope())).into_response()
    }
}

/// Renders platform errors for channel-api.
pub fn render(e: PlatformError) -> Response {
    Error::from(e).into_response()
}
