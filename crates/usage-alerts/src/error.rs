//! The usage-alerts error: `{"error": "..."}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use keel_platform::http::PlatformError;
use keel_platform::sea_orm::DbErr;
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{message}")]
    Api { status: StatusCode, message: String },
    /// Logged in full, answered as a bare 500.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    pub fn api(status: StatusCode, message: impl Into<String>) -> Self {
        Self::Api {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::api(StatusCode::BAD_REQUEST, message)
    }

    pub fn unauthorized() -> Self {
        Self::api(StatusCode::UNAUTHORIZED, "Unauthorized")
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: String,
}

impl From<PlatformError> for Error {
    fn from(e: PlatformError) -> Self {
        let message = match &e {
            PlatformError::NotFound => "Not found".to_owned(),
            other => other.message(),
        };
        Self::api(e.status(), message)
    }
}

impl From<DbErr> for Error {
    fn from(e: DbErr) -> Self {
        Self::Internal(e.to_string())
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let (status, error) = match self {
            Self::Api { status, message } => (status, message),
            Self::Internal(detail) => {
                tracing::error!(error = %detail, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal server error".to_owned(),
                )
            }
        };
        (status, Json(ErrorBody { error })).into_response()
    }
}

/// Renders platform errors for this service.
pub fn render(e: PlatformError) -> Response {
    Error::from(e).into_response()
}
