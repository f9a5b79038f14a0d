//! One error type for every service, generic over its wire shape.
//!
//! An `ApiError<S>` is either a client error (status, code, message, extra
//! data, optional `Retry-After`), which the service's [`WireShape`] turns
//! into its documented body, or an internal failure carrying its cause. A
//! cause is never sent: the answer is a bare 500 in the service's shape, and
//! the cause's whole source chain is logged once, inside the request's span
//! (which carries the request id). An internal failure that shows a
//! dependency away ([`crate::outage`]: the database unreachable, Redis
//! down, the disk full) is answered 503 (507) with `Retry-After` instead.
//! Services add only their shape and their own named constructors.

use std::marker::PhantomData;

use crate::http::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use super::PlatformError;

/// How a service writes its errors on the wire.
pub trait WireShape: Send + Sync + 'static {
    /// The service's code for an error the platform produced.
    fn platform_code(e: &PlatformError) -> &'static str;

    /// The service's message for an error the platform produced.
    fn platform_message(e: &PlatformError) -> String {
        e.message()
    }

    /// The body of an error answer. `data` holds what the error added.
    fn body(status: StatusCode, code: &str, message: &str, data: &Map<String, Value>) -> Value;

    /// The answer for a request body that could not be read into its type;
    /// by default 400 with the platform's code for a bad request, naming
    /// the field.
    fn input_error(e: super::input::InputError) -> ApiError<Self>
    where
        Self: Sized,
    {
        ApiError::from(e.into_platform())
    }

    /// The answer as a response (JSON by default).
    fn respond(status: StatusCode, body: Value) -> Response {
        (status, Json(body)).into_response()
    }
}

pub use crate::failure::{Cause, chain};

/// An error of a service with wire shape `S`.
pub struct ApiError<S> {
    kind: Box<Kind>,
    _shape: PhantomData<fn() -> S>,
}

enum Kind {
    Client {
        status: StatusCode,
        code: &'static str,
        message: String,
        data: Map<String, Value>,
        retry_after: Option<u64>,
    },
    Internal(Cause),
}

/// One constructor per client status, each the status with the service's
/// `code`.
impl<S> ApiError<S> {
    /// 400 with the service's `code`.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::api(StatusCode::BAD_REQUEST, code, message)
    }

    /// 401 with the service's `code`.
    pub fn unauthorized(code: &'static str, message: impl Into<String>) -> Self {
        Self::api(StatusCode::UNAUTHORIZED, code, message)
    }

    /// 403 with the service's `code`.
    pub fn forbidden(code: &'static str, message: impl Into<String>) -> Self {
        Self::api(StatusCode::FORBIDDEN, code, message)
    }

    /// 404 with the service's `code`.
    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::api(StatusCode::NOT_FOUND, code, message)
    }

    /// 409 with the service's `code`.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::api(StatusCode::CONFLICT, code, message)
    }

    /// 413 with the service's `code`.
    pub fn too_large(code: &'static str, message: impl Into<String>) -> Self {
        Self::api(StatusCode::PAYLOAD_TOO_LARGE, code, message)
    }

    /// 429 with the service's `code`.
    pub fn too_many(code: &'static str, message: impl Into<String>) -> Self {
        Self::api(StatusCode::TOO_MANY_REQUESTS, code, message)
    }
}

impl<S> ApiError<S> {
    /// A client error.
    pub fn api(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self::from_kind(Kind::Client {
            status,
            code,
            message: message.into(),
            data: Map::new(),
            retry_after: None,
        })
    }

    /// An internal failure: logged with its cause, answered as a bare 500.
    pub fn internal(cause: impl Into<Cause>) -> Self {
        Self::from_kind(Kind::Internal(cause.into()))
    }

    fn from_kind(kind: Kind) -> Self {
        Self {
            kind: Box::new(kind),
            _shape: PhantomData,
        }
    }

    /// Adds a member to the error's data.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        if let Kind::Client { data, .. } = &mut *self.kind {
            data.insert(key.to_owned(), value.into());
        }
        self
    }

    /// Adds `Retry-After` (seconds, at least 1) and `retry_after` to the data.
    #[must_use]
    pub fn retry_after(mut self, secs: u64) -> Self {
        let secs = secs.max(1);
        if let Kind::Client { retry_after, .. } = &mut *self.kind {
            *retry_after = Some(secs);
        }
        self.with("retry_after", secs)
    }

    /// The HTTP status it answers with.
    pub fn status(&self) -> StatusCode {
        match &*self.kind {
            Kind::Client { status, .. } => *status,
            Kind::Internal(cause) => internal_kind(cause.as_ref()).status(),
        }
    }

    /// The client error's code (`None` for an internal failure).
    pub fn code(&self) -> Option<&'static str> {
        match &*self.kind {
            Kind::Client { code, .. } => Some(code),
            Kind::Internal(_) => None,
        }
    }

    /// The message a client would get.
    pub fn message(&self) -> &str {
        match &*self.kind {
            Kind::Client { message, .. } => message,
            Kind::Internal(_) => "Internal server error",
        }
    }

    /// The client error's extra data.
    pub fn data(&self) -> Option<&Map<String, Value>> {
        match &*self.kind {
            Kind::Client { data, .. } => Some(data),
            Kind::Internal(_) => None,
        }
    }

    pub fn is_internal(&self) -> bool {
        matches!(*self.kind, Kind::Internal(_))
    }
}

/// What an internal failure is answered as: an outage, or a bare 500.
fn internal_kind(cause: &(dyn std::error::Error + 'static)) -> PlatformError {
    match crate::outage::of(cause) {
        Some(crate::outage::Outage::Unavailable) => PlatformError::Unavailable,
        Some(crate::outage::Outage::StorageFull) => PlatformError::StorageFull,
        None => PlatformError::Internal,
    }
}

/// Logs an internal failure's cause; what it is answered as.
fn log_internal(cause: &(dyn std::error::Error + 'static)) -> PlatformError {
    let p = internal_kind(cause);
    if p == PlatformError::Internal {
        tracing::error!(error = %chain(cause), "internal error");
    } else {
        tracing::warn!(error = %chain(cause), answer = %p.status(), "a dependency is unavailable");
    }
    p
}

/// An error as a client sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub data: Map<String, Value>,
}

impl<S: WireShape> ApiError<S> {
    /// What a client gets to see; an internal failure's cause is logged
    /// here (inside the request's span) and replaced by the shape's 500.
    /// A `Retry-After` is in `data` as `retry_after` (a client error's is
    /// there already, see [`Self::retry_after`]).
    pub fn into_client(self) -> ClientError {
        let (mut client, retry_after) = self.into_parts();
        if let Some(secs) = retry_after {
            client
                .data
                .insert("retry_after".to_owned(), Value::from(secs));
        }
        client
    }

    /// What a client sees and its `Retry-After`, the cause logged.
    fn into_parts(self) -> (ClientError, Option<u64>) {
        match *self.kind {
            Kind::Client {
                status,
                code,
                message,
                data,
                retry_after,
            } => (
                ClientError {
                    status,
                    code,
                    message,
                    data,
                },
                retry_after,
            ),
            Kind::Internal(cause) => {
                let p = log_internal(cause.as_ref());
                let client = ClientError {
                    status: p.status(),
                    code: S::platform_code(&p),
                    message: S::platform_message(&p),
                    data: Map::new(),
                };
                (client, p.retry_after())
            }
        }
    }
}

impl<S> std::fmt::Debug for ApiError<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.kind {
            Kind::Client {
                status,
                code,
                message,
                ..
            } => write!(f, "{status} {code}: {message}"),
            Kind::Internal(cause) => write!(f, "internal: {}", chain(cause.as_ref())),
        }
    }
}

impl<S> std::fmt::Display for ApiError<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.kind {
            Kind::Client { message, .. } => f.write_str(message),
            Kind::Internal(_) => f.write_str("internal error"),
        }
    }
}

/// An internal failure's cause is its source, so its chain is logged and
/// an outage in it is found when it is wrapped in another error.
impl<S> std::error::Error for ApiError<S> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.kind {
            Kind::Client { .. } => None,
            Kind::Internal(cause) => Some(cause.as_ref()),
        }
    }
}

impl<S: WireShape> IntoResponse for ApiError<S> {
    fn into_response(self) -> Response {
        let (c, retry_after) = self.into_parts();
        let mut resp = S::respond(c.status, S::body(c.status, c.code, &c.message, &c.data));
        if let Some(secs) = retry_after {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        resp
    }
}

impl<S: WireShape> From<PlatformError> for ApiError<S> {
    fn from(e: PlatformError) -> Self {
        match e {
            PlatformError::Internal => Self::internal("the platform reported an internal error"),
            e => {
                let retry = e.retry_after();
                let err = Self::api(e.status(), S::platform_code(&e), S::platform_message(&e));
                match retry {
                    Some(secs) => err.retry_after(secs),
                    None => err,
                }
            }
        }
    }
}

/// Over a door's limit at the guard: 429 with `Retry-After`, in the
/// service's shape.
impl<S: WireShape> From<crate::guard::Throttled> for ApiError<S> {
    fn from(t: crate::guard::Throttled) -> Self {
        Self::from(PlatformError::TooManyAttempts(t.secs()))
    }
}

impl<S: WireShape> From<super::input::InputError> for ApiError<S> {
    fn from(e: super::input::InputError) -> Self {
        S::input_error(e)
    }
}

/// Failures of the shared machinery are internal errors of any service.
macro_rules! internal_from {
    ($($t:ty),+ $(,)?) => {$(
        impl<S> From<$t> for ApiError<S> {
            fn from(e: $t) -> Self {
                Self::internal(e)
            }
        }
    )+};
}

internal_from!(
    sea_orm::DbErr,
    crate::cache::CacheError,
    crate::batch::BatchError,
    serde_json::Error,
    crate::password::HashError,
    super::json::JsonError,
);

/// A service's renderer of platform errors (fallbacks, timeouts, panics).
pub fn render<S: WireShape>(e: PlatformError) -> Response {
    ApiError::<S>::from(e).into_response()
}
