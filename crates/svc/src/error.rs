//! The svc error, WordPress REST style:
//! `{"code": "...", "message": "...", "data": {"status": N, ...}}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use keel_platform::http::PlatformError;
use keel_platform::sea_orm::DbErr;
use serde::Serialize;
use serde_json::{Map, Value};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{code}: {message}")]
    Api {
        status: StatusCode,
        code: &'static str,
        message: String,
        /// Extra members of `data`, besides `status`.
        data: Map<String, Value>,
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
            data: Map::new(),
            retry_after: None,
        }
    }

    /// Adds `Retry-After` (and `data.retry_after`).
    #[must_use]
    pub fn retry_after(mut self, secs: u64) -> Self {
        let secs = secs.max(1);
        if let Self::Api { retry_after, .. } = &mut self {
            *retry_after = Some(secs);
        }
        self.with("retry_after", secs)
    }

    /// Adds a member to `data`.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        if let Self::Api { data, .. } = &mut self {
            data.insert(key.to_owned(), value.into());
        }
        self
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
    /// Always holds `status`; some errors add more (e.g. `fields`).
    #[schema(value_type = Object)]
    pub data: Map<String, Value>,
}

impl From<PlatformError> for Error {
    fn from(e: PlatformError) -> Self {
        let code = match &e {
            PlatformError::NotFound => "rest_no_route",
            PlatformError::MethodNotAllowed => "rest_no_route",
            PlatformError::PayloadTooLarge => "rest_payload_too_large",
            PlatformError::UnsupportedMediaType(_) => "rest_unsupported_media_type",
            PlatformError::BadRequest(_) => "rest_invalid_json",
            PlatformError::Timeout => "rest_timeout",
            PlatformError::Internal => "internal_server_error",
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
        let (status, code, message, mut data, retry_after) = match self {
            Self::Api {
                status,
                code,
                message,
                data,
                retry_after,
            } => (status, code, message, data, retry_after),
            Self::Internal(detail) => {
                tracing::error!(error = %detail, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal_server_error",
                    "Internal server error".to_owned(),
                    Map::new(),
                    None,
                )
            }
        };
        data.insert("status".to_owned(), Value::from(status.as_u16()));
        let body = ErrorBody {
            code: code.to_owned(),
            message,
            data,
        };
        let mut resp = (status, Json(body)).into_response();
        if let Some(secs) = retry_after {
            resp.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(secs),
            );
        }
        resp
    }
}

/// Renders platform errors for this service.
pub fn render(e: PlatformError) -> Response {
    Error::from(e).into_response()
}
