//! tRPC's error codes and its error envelope,
//! `{"error":{"message","code":<JSON-RPC>,"data":{"code":"<KEY>","httpStatus":N,"path"}}}`.
//! The errors the engine raises itself (a wrong method, unreadable input,
//! an unknown procedure) are made here; a service's own are made by the
//! service, with a [`TrpcCode`].

use axum::http::StatusCode;
use keel_platform::http::input::InputError;
use keel_platform::http::{ApiError, PlatformError, WireShape};
use serde::Serialize;
use serde_json::{Map, Value};

/// tRPC's error codes, each with its HTTP status and JSON-RPC code (as
/// `@trpc/server` v11 has them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrpcCode {
    ParseError,
    BadRequest,
    Unauthorized,
    PaymentRequired,
    Forbidden,
    NotFound,
    MethodNotSupported,
    Timeout,
    Conflict,
    PreconditionFailed,
    PayloadTooLarge,
    UnsupportedMediaType,
    UnprocessableContent,
    PreconditionRequired,
    TooManyRequests,
    ClientClosedRequest,
    InternalServerError,
    NotImplemented,
    BadGateway,
    ServiceUnavailable,
    GatewayTimeout,
}

impl TrpcCode {
    /// Every code.
    pub const ALL: [Self; 21] = [
        Self::ParseError,
        Self::BadRequest,
        Self::Unauthorized,
        Self::PaymentRequired,
        Self::Forbidden,
        Self::NotFound,
        Self::MethodNotSupported,
        Self::Timeout,
        Self::Conflict,
        Self::PreconditionFailed,
        Self::PayloadTooLarge,
        Self::UnsupportedMediaType,
        Self::UnprocessableContent,
        Self::PreconditionRequired,
        Self::TooManyRequests,
        Self::ClientClosedRequest,
        Self::InternalServerError,
        Self::NotImplemented,
        Self::BadGateway,
        Self::ServiceUnavailable,
        Self::GatewayTimeout,
    ];

    /// The key on the wire (`data.code`), e.g. `BAD_REQUEST`.
    pub const fn key(self) -> &'static str {
        self.facts().0
    }

    /// The HTTP status it is answered with.
    pub fn status(self) -> StatusCode {
        StatusCode::from_u16(self.facts().1).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The JSON-RPC 2.0 code (`error.code`).
    pub const fn rpc(self) -> i32 {
        self.facts().2
    }

    /// The code of a key.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.key() == key)
    }

    const fn facts(self) -> (&'static str, u16, i32) {
        match self {
            Self::ParseError => ("PARSE_ERROR", 400, -32700),
            Self::BadRequest => ("BAD_REQUEST", 400, -32600),
            Self::Unauthorized => ("UNAUTHORIZED", 401, -32001),
            Self::PaymentRequired => ("PAYMENT_REQUIRED", 402, -32002),
            Self::Forbidden => ("FORBIDDEN", 403, -32003),
            Self::NotFound => ("NOT_FOUND", 404, -32004),
            Self::MethodNotSupported => ("METHOD_NOT_SUPPORTED", 405, -32005),
            Self::Timeout => ("TIMEOUT", 408, -32008),
            Self::Conflict => ("CONFLICT", 409, -32009),
            Self::PreconditionFailed => ("PRECONDITION_FAILED", 412, -32012),
            Self::PayloadTooLarge => ("PAYLOAD_TOO_LARGE", 413, -32013),
            Self::UnsupportedMediaType => ("UNSUPPORTED_MEDIA_TYPE", 415, -32015),
            Self::UnprocessableContent => ("UNPROCESSABLE_CONTENT", 422, -32022),
            Self::PreconditionRequired => ("PRECONDITION_REQUIRED", 428, -32028),
            Self::TooManyRequests => ("TOO_MANY_REQUESTS", 429, -32029),
            Self::ClientClosedRequest => ("CLIENT_CLOSED_REQUEST", 499, -32099),
            Self::InternalServerError => ("INTERNAL_SERVER_ERROR", 500, -32603),
            Self::NotImplemented => ("NOT_IMPLEMENTED", 501, -32603),
            Self::BadGateway => ("BAD_GATEWAY", 502, -32603),
            Self::ServiceUnavailable => ("SERVICE_UNAVAILABLE", 503, -32603),
            Self::GatewayTimeout => ("GATEWAY_TIMEOUT", 504, -32603),
        }
    }
}

/// tRPC's wire shape for errors.
pub struct Trpc;

/// An error answered in tRPC's envelope.
pub type Error = ApiError<Trpc>;

/// An error with `code`'s key and HTTP status.
pub fn error(code: TrpcCode, message: impl Into<String>) -> Error {
    Error::api(code.status(), code.key(), message)
}

/// tRPC's error envelope.
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
        let code = match e {
            PlatformError::NotFound => TrpcCode::NotFound,
            PlatformError::MethodNotAllowed => TrpcCode::MethodNotSupported,
            PlatformError::PayloadTooLarge => TrpcCode::PayloadTooLarge,
            PlatformError::UnsupportedMediaType(_) => TrpcCode::UnsupportedMediaType,
            PlatformError::BadRequest(_) => TrpcCode::ParseError,
            PlatformError::Timeout => TrpcCode::Timeout,
            PlatformError::Internal => TrpcCode::InternalServerError,
            // tRPC has no 507: the client is told to come back later.
            PlatformError::Unavailable | PlatformError::StorageFull | PlatformError::Starting => {
                TrpcCode::ServiceUnavailable
            }
            PlatformError::TooManyAttempts(_) => TrpcCode::TooManyRequests,
        };
        code.key()
    }

    /// A wrong field of a body is a BAD_REQUEST naming it.
    fn input_error(e: InputError) -> Error {
        match e {
            InputError::Field { path, problem } if !path.is_empty() => {
                error(TrpcCode::BadRequest, format!("{path}: {problem}")).with("field", path)
            }
            other => Error::from(other.into_platform()),
        }
    }

    fn body(status: StatusCode, code: &str, message: &str, data: &Map<String, Value>) -> Value {
        let rpc = TrpcCode::from_key(code).map_or(-32603, TrpcCode::rpc);
        serde_json::to_value(ErrorBody {
            error: ErrorShape {
                message: message.to_owned(),
                code: rpc,
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

/// Input that is not an object.
pub(super) fn not_an_object() -> Error {
    error(TrpcCode::BadRequest, "input: must be an object")
}

/// An input field read wrongly, named.
pub(super) fn bad_input(e: InputError) -> Error {
    match e {
        InputError::Field { path, problem } if !path.is_empty() => {
            error(TrpcCode::BadRequest, format!("input.{path}: {problem}")).with("field", path)
        }
        InputError::Field { problem, .. } => {
            error(TrpcCode::BadRequest, format!("input: {problem}"))
        }
        InputError::Body(p) => error(TrpcCode::BadRequest, p.message()),
    }
}

/// A request whose input is not JSON.
pub(super) fn not_json(e: &serde_json::Error) -> Error {
    error(TrpcCode::ParseError, format!("The input is not JSON: {e}"))
}

/// A batch whose input is not keyed by position.
pub(super) fn batch_input() -> Error {
    error(
        TrpcCode::BadRequest,
        "A batch's input must be an object keyed \"0\", \"1\", ...",
    )
}

/// A batch of more calls than allowed (as `@trpc/server`'s
/// `maxBatchSize`: the whole request, no path).
pub(super) fn batch_too_large() -> Error {
    error(TrpcCode::BadRequest, "Batch call exceeds maximum size")
}

pub(super) fn stream_not_batched() -> Error {
    error(
        TrpcCode::BadRequest,
        "Streaming requests must be batched (you can do a batch of 1)",
    )
}

pub(super) fn no_procedure(name: &str) -> Error {
    error(TrpcCode::NotFound, format!("No procedure {name}"))
}

/// METHOD_NOT_SUPPORTED, saying which method the procedure takes.
pub(super) fn wrong_method(procedure: Option<(&str, super::Kind)>) -> Error {
    let message = match procedure {
        Some((name, super::Kind::Query)) => format!("{name} is a query: use GET"),
        Some((name, super::Kind::Mutation)) => format!("{name} is a mutation: use POST"),
        None => "This method is not allowed on this path".to_owned(),
    };
    error(TrpcCode::MethodNotSupported, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_from_its_key() {
        for code in TrpcCode::ALL {
            assert_eq!(TrpcCode::from_key(code.key()), Some(code));
        }
        assert_eq!(
            TrpcCode::TooManyRequests.status(),
            StatusCode::TOO_MANY_REQUESTS
        );
        assert_eq!(TrpcCode::BadRequest.rpc(), -32600);
    }
}
