//! The channel's error shapes. channel-api answers tRPC's error envelope,
//! `{"error":{"message","code":<JSON-RPC>,"data":{"code":"<KEY>","httpStatus":N,"path"}}}`;
//! channel-web a small HTML page.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use keel_platform::http::{ApiError, PlatformError, WireShape};
use serde_json::{Map, Value};

pub use crate::trpc::error::{ErrorBody, Trpc, TrpcCode};

use crate::domain::channel::UpdateError;
use crate::domain::logo::LogoError;
use crate::domain::owner::{SetupError, SignInError};
use crate::domain::panels::PanelError;
use crate::domain::webhook::WebhookError;
use crate::getstream::ProviderError;

/// channel-api's errors, in tRPC's envelope.
pub type Error = ApiError<Trpc>;

/// A tRPC error with its key's HTTP status.
fn trpc(code: TrpcCode, message: impl Into<String>) -> Error {
    crate::trpc::error::error(code, message)
}

/// A procedure or route for the owner, called by someone else.
pub fn not_signed_in() -> Error {
    trpc(TrpcCode::Unauthorized, "Sign in as the channel's owner")
}

/// A change from another site (cross-site request protection).
pub fn cross_site() -> Error {
    trpc(TrpcCode::Forbidden, "Cross-site request refused")
}

/// A sign-in with a wrong email or password (the same for both).
pub fn wrong_credentials() -> Error {
    trpc(TrpcCode::Unauthorized, "Wrong email or password")
}

/// Over a rate limit; come back in `retry_after_secs`.
pub fn too_many(message: &'static str, retry_after_secs: u64) -> Error {
    trpc(TrpcCode::TooManyRequests, message).retry_after(retry_after_secs)
}

/// A stream procedure before `stream.provision`.
pub fn not_provisioned() -> Error {
    trpc(
        TrpcCode::PreconditionFailed,
        "The stream is not provisioned yet: call stream.provision",
    )
}

/// The provider's call came without an ingest address.
pub fn no_ingest_address() -> Error {
    trpc(
        TrpcCode::BadGateway,
        "The provider's call has no RTMP ingest address",
    )
}

pub fn no_such_logo() -> Error {
    trpc(TrpcCode::NotFound, "No such logo")
}

/// An upload that is not multipart, or has no `file` field, or is broken.
pub fn bad_upload(why: LogoUpload) -> Error {
    match why {
        LogoUpload::NotMultipart => Error::from(PlatformError::BadRequest(
            "Send multipart/form-data with the image in the field named file".to_owned(),
        )),
        LogoUpload::TooLarge => Error::from(LogoError::TooLarge),
        LogoUpload::NoFile => trpc(TrpcCode::BadRequest, "No file in the field named file"),
        LogoUpload::Broken(text) => trpc(
            TrpcCode::BadRequest,
            format!("The upload is broken: {text}"),
        ),
    }
}

/// What is wrong with a logo upload's body.
pub enum LogoUpload {
    NotMultipart,
    TooLarge,
    NoFile,
    Broken(String),
}

/// A provider event that is not JSON.
pub fn event_not_json(e: &serde_json::Error) -> Error {
    trpc(TrpcCode::BadRequest, format!("The event is not JSON: {e}"))
}

/// channel-web's proxy could not get channel-api's answer.
pub fn proxied(why: ProxyFailure) -> Error {
    match why {
        ProxyFailure::TooLarge => trpc(TrpcCode::PayloadTooLarge, "The request body is too large"),
        ProxyFailure::Unreadable => trpc(
            TrpcCode::BadGateway,
            "channel-api answered something unreadable",
        ),
        ProxyFailure::Timeout => trpc(
            TrpcCode::GatewayTimeout,
            "The channel API took too long to answer",
        ),
        ProxyFailure::Unreachable => trpc(
            TrpcCode::BadGateway,
            "The channel API is unreachable; try again shortly",
        ),
    }
}

/// Why channel-web's proxy has no answer from channel-api.
pub enum ProxyFailure {
    TooLarge,
    Unreadable,
    Timeout,
    Unreachable,
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
        message = keel_platform::http::escape_html(message),
    );
    (status, Html(body)).into_response()
}

/// Renders platform errors for channel-web.
pub fn render_web(e: PlatformError) -> Response {
    keel_platform::http::api_error::render::<Page>(e)
}

impl From<ProviderError> for Error {
    fn from(e: ProviderError) -> Self {
        match &e {
            ProviderError::NotConfigured(missing) => {
                trpc(TrpcCode::PreconditionFailed, e.to_string()).with("missing", missing.clone())
            }
            ProviderError::Failed(_) => trpc(TrpcCode::BadGateway, e.to_string()),
            ProviderError::Unreachable(cause) => {
                // Answered as the provider's failure; its cause is logged here.
                tracing::warn!(cause = %keel_platform::failure::chain(cause), "{e}");
                trpc(TrpcCode::BadGateway, e.to_string())
            }
            ProviderError::Signing(_) => Error::internal(e),
        }
    }
}

impl From<PanelError> for Error {
    fn from(e: PanelError) -> Self {
        match e {
            PanelError::NotFound(_) => trpc(TrpcCode::NotFound, e.to_string()),
            PanelError::TooMany | PanelError::NotAPermutation => {
                trpc(TrpcCode::BadRequest, e.to_string())
            }
            PanelError::Db(db) => Error::from(db),
        }
    }
}

impl From<UpdateError> for Error {
    fn from(e: UpdateError) -> Self {
        match e {
            UpdateError::TooManyLinks => {
                trpc(TrpcCode::BadRequest, e.to_string()).with("field", "socialLinks")
            }
            UpdateError::Db(db) => Error::from(db),
        }
    }
}

impl From<SetupError> for Error {
    fn from(e: SetupError) -> Self {
        match e {
            SetupError::SetUpAlready => trpc(TrpcCode::Conflict, e.to_string()),
            SetupError::WrongCode => {
                trpc(TrpcCode::Unauthorized, e.to_string()).with("field", "code")
            }
            SetupError::Hash(h) => Error::internal(h),
            SetupError::Db(db) => Error::from(db),
        }
    }
}

impl From<SignInError> for Error {
    fn from(e: SignInError) -> Self {
        match e {
            SignInError::Throttled(t) => Error::from(t),
            SignInError::Db(db) => Error::from(db),
        }
    }
}

impl From<LogoError> for Error {
    fn from(e: LogoError) -> Self {
        match e {
            LogoError::TooLarge => trpc(TrpcCode::PayloadTooLarge, e.to_string()),
            LogoError::WrongType => trpc(TrpcCode::UnsupportedMediaType, e.to_string()),
            LogoError::NotAnImage(_) => trpc(TrpcCode::BadRequest, e.to_string()),
            LogoError::Db(db) => Error::from(db),
        }
    }
}

impl From<WebhookError> for Error {
    fn from(e: WebhookError) -> Self {
        match e {
            WebhookError::Unauthorized(why) => trpc(TrpcCode::Unauthorized, why),
            WebhookError::BadBody(why) => trpc(TrpcCode::BadRequest, why),
        }
    }
}
