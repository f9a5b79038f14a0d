//! The accounts error: `{code, message}` with an UPPER_SNAKE code.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use keel_platform::http::PlatformError;
use keel_platform::sea_orm::DbErr;
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{code}: {message}")]
    Api {
        status: StatusCode,
        code: &'static str,
        message: String,
    },
    /// Logged in full, answered as a bare 500.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    pub fn api(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self::Api {
            status,
            code,
            message: message.into(),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Machine-readable, UPPER_SNAKE.
    pub code: String,
    pub message: String,
}

impl From<PlatformError> for Error {
    fn from(e: PlatformError) -> Self {
        let code = match &e {
            PlatformError::NotFound => "NOT_FOUND",
            PlatformError::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            PlatformError::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            PlatformError::UnsupportedMediaType(_) => "UNSUPPORTED_MEDIA_TYPE",
            PlatformError::BadRequest(_) => "BAD_REQUEST",
            PlatformError::Timeout => "REQUEST_TIMEOUT",
            PlatformError::Internal => "INTERNAL_ERROR",
        };
        Self::api(e.status(), code, e.message())
    }
}

impl From<DbErr> for Error {
    fn from(e: DbErr) -> Self {
        Self::Internal(e.to_string())
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let (status, code, message) = match self {
            Self::Api {
                status,
                code,
                message,
            } => (status, code, message),
            Self::Internal(detail) => {
                tracing::error!(error = %detail, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "INTERNAL_ERROR",
                    "Internal server error".to_owned(),
                )
            }
        };
        let body = ErrorBody {
            code: code.to_owned(),
            message,
        };
        (status, Json(body)).into_response()
    }
}

/// Renders platform errors for this service.
pub fn render(e: PlatformError) -> Response {
    Error::from(e).into_response()
}
