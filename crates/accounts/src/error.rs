//! The accounts error: `{code, message}` with an UPPER_SNAKE code.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
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
        /// Seconds, sent as `Retry-After` (429).
        retry_after: Option<u64>,
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
            retry_after: None,
        }
    }

    /// 400 `VALIDATION_ERROR`; the message names the field.
    pub fn validation(field: &str, problem: &str) -> Self {
        Self::api(
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
            format!("{field} {problem}"),
        )
    }

    pub fn required(field: &str) -> Self {
        Self::validation(field, "is required")
    }

    pub fn invalid_id(field: &str) -> Self {
        Self::api(
            StatusCode::BAD_REQUEST,
            "INVALID_ID",
            format!("{field} must be a 24-character hexadecimal id"),
        )
    }

    pub fn unauthorized(message: &str) -> Self {
        Self::api(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message)
    }

    pub fn not_found(what: &str) -> Self {
        Self::api(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            format!("{what} not found"),
        )
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::api(StatusCode::CONFLICT, code, message)
    }

    pub fn too_many(code: &'static str, message: &str, retry_after_secs: u64) -> Self {
        Self::Api {
            status: StatusCode::TOO_MANY_REQUESTS,
            code,
            message: message.to_owned(),
            retry_after: Some(retry_after_secs.max(1)),
        }
    }

    pub fn internal(e: impl std::fmt::Display) -> Self {
        Self::Internal(e.to_string())
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
        let (status, code, message, retry_after) = match self {
            Self::Api {
                status,
                code,
                message,
                retry_after,
            } => (status, code, message, retry_after),
            Self::Internal(detail) => {
                tracing::error!(error = %detail, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "INTERNAL_ERROR",
                    "Internal server error".to_owned(),
                    None,
                )
            }
        };
        let body = ErrorBody {
            code: code.to_owned(),
            message,
        };
        let mut resp = (status, Json(body)).into_response();
        if let Some(secs) = retry_after {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        resp
    }
}

/// Renders platform errors for this service.
pub fn render(e: PlatformError) -> Response {
    Error::from(e).into_response()
}
