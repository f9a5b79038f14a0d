//! The svc error shape, WordPress REST style:
//! `{"code": "...", "message": "...", "data": {"status": N, ...}}`, and the
//! one place where an error's status and code are chosen: the domain's
//! errors are mapped here, and the edge's own are made here.

use axum::http::StatusCode;
use keel_platform::http::{ApiError, PlatformError, WireShape};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::domain::admin::AdminError;
use crate::domain::appcheck::AppCheckError;
use crate::domain::forms::{BadDefinition, SubmissionError};
use crate::domain::params::ParamError;
use crate::domain::push::import::{ImportError, InvalidFile};
use crate::domain::push::send::SendError;
use crate::domain::settings::{InvalidSetting, SettingsError};
use crate::domain::site::SiteError;

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

/// The error codes of the API, as the mapping below and the OpenAPI
/// document both name them.
pub mod code {
    pub const REST_NO_ROUTE: &str = "rest_no_route";
    pub const REST_INVALID_JSON: &str = "rest_invalid_json";
    pub const REST_INVALID_PARAM: &str = "rest_invalid_param";
    pub const REST_MISSING_PARAM: &str = "rest_missing_callback_param";
    pub const REST_NOT_LOGGED_IN: &str = "rest_not_logged_in";
    pub const REST_INVALID_CREDENTIALS: &str = "rest_invalid_credentials";
    pub const INCORRECT_PASSWORD: &str = "incorrect_password";
    pub const REST_COOKIE_INVALID_NONCE: &str = "rest_cookie_invalid_nonce";
    pub const REST_FORBIDDEN: &str = "rest_forbidden";
    pub const PUSH_FORBIDDEN: &str = "svc_push_forbidden";
    pub const APPCHECK_FAILED: &str = "appcheck_failed";
    pub const MISSING_FIELDS: &str = "missing_fields";
    pub const INVALID_FIELDS: &str = "invalid_fields";
    pub const INVALID_EMAIL: &str = "invalid_email";
    pub const RATE_LIMITED: &str = "rate_limited";
    pub const FORM_NOT_FOUND: &str = "form_not_found";
    pub const FORM_EXISTS: &str = "form_exists";
    pub const SEND_NOT_FOUND: &str = "svc_push_send_not_found";
    pub const NOT_CANCELLABLE: &str = "svc_push_not_cancellable";
    pub const IDEMPOTENCY_KEY_REUSED: &str = "svc_push_idempotency_key_reused";
    pub const NO_RECIPIENTS: &str = "svc_push_no_recipients";
    pub const DEVICE_NOT_FOUND: &str = "svc_push_device_not_found";
    pub const INVALID_FILE_TYPE: &str = "invalid_file_type";
    pub const INVALID_USERNAME: &str = "invalid_username";
    pub const EXISTING_USER_LOGIN: &str = "existing_user_login";
    pub const DUPLICATE_APP_PASSWORD: &str = "application_password_duplicate_name";
    pub const APP_PASSWORD_NOT_FOUND: &str = "rest_application_password_not_found";
    pub const APP_PASSWORD_NEEDS_SESSION: &str = "rest_cannot_create_application_passwords";
}

use code::*;

impl WireShape for Wire {
    fn platform_code(e: &PlatformError) -> &'static str {
        match e {
            PlatformError::NotFound | PlatformError::MethodNotAllowed => REST_NO_ROUTE,
            PlatformError::PayloadTooLarge => "rest_payload_too_large",
            PlatformError::UnsupportedMediaType(_) => "rest_unsupported_media_type",
            PlatformError::BadRequest(_) => REST_INVALID_JSON,
            PlatformError::Timeout => "rest_timeout",
            PlatformError::Internal => "internal_server_error",
            PlatformError::Unavailable | PlatformError::Starting => "rest_service_unavailable",
            PlatformError::StorageFull => "rest_insufficient_storage",
            PlatformError::TooManyAttempts(_) => RATE_LIMITED,
        }
    }

    /// A body read into its type: a field at fault is
    /// `rest_missing_callback_param` or `rest_invalid_param` naming it,
    /// as the hand-checked bodies answer.
    fn input_error(e: keel_platform::http::input::InputError) -> Error {
        match e {
            keel_platform::http::input::InputError::Body(p) => Error::from(p),
            keel_platform::http::input::InputError::Field { path, problem } => {
                Error::from(crate::domain::params::from_field(&path, &problem))
            }
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
    Error::not_found(
        REST_NO_ROUTE,
        "No route was found matching the URL and request method.",
    )
}

/// A body that is JSON but not an object.
pub fn not_an_object() -> Error {
    Error::bad_request(REST_INVALID_JSON, "The body must be a JSON object")
}

/// `rest_invalid_param` with `message`.
pub fn invalid_param(message: impl Into<String>) -> Error {
    Error::bad_request(REST_INVALID_PARAM, message)
}

/// `page` or `per_page` out of range.
pub fn bad_page() -> Error {
    invalid_param("page must be 1 to 1000000 and per_page 1 to 100")
}

/// A form body whose id is not the path's.
pub fn id_mismatch() -> Error {
    invalid_param("The body's id differs from the path's")
}

pub fn not_logged_in() -> Error {
    Error::unauthorized(REST_NOT_LOGGED_IN, "You are not currently logged in.")
}

pub fn bad_app_password() -> Error {
    Error::unauthorized(
        INCORRECT_PASSWORD,
        "The provided password is an invalid application password.",
    )
}

pub fn bad_credentials() -> Error {
    Error::unauthorized(
        REST_INVALID_CREDENTIALS,
        "Unknown username or wrong password",
    )
}

/// A session cookie without its nonce.
pub fn bad_nonce() -> Error {
    Error::forbidden(REST_COOKIE_INVALID_NONCE, "Cookie check failed")
}

/// An administrator route without the capability; `code` says which.
pub fn not_allowed(code: &'static str) -> Error {
    Error::forbidden(code, "Sorry, you are not allowed to do that.")
}

/// Disabling or removing oneself from the console.
pub fn not_yourself() -> Error {
    Error::forbidden(
        REST_FORBIDDEN,
        "You cannot disable or remove yourself; another admin or the command line can.",
    )
}

pub fn no_such_form() -> Error {
    Error::not_found(FORM_NOT_FOUND, "Form not found")
}

pub fn form_exists() -> Error {
    Error::conflict(FORM_EXISTS, "A form with this id exists; PUT replaces it")
}

pub fn no_such_device() -> Error {
    Error::not_found(DEVICE_NOT_FOUND, "This push token is not registered")
}

pub fn no_such_app_password() -> Error {
    Error::not_found(
        APP_PASSWORD_NOT_FOUND,
        "You have no application password with that uuid",
    )
}

pub fn app_password_needs_session() -> Error {
    Error::forbidden(
        APP_PASSWORD_NEEDS_SESSION,
        "Application passwords are made from a signed-in session (POST /admin/login), not with an application password",
    )
}

pub fn no_such_send() -> Error {
    Error::from(SendError::NotFound)
}

/// Over the submissions allowed per minute.
pub fn too_many_submissions(retry_after_secs: u64) -> Error {
    Error::too_many(RATE_LIMITED, "Too many submissions; try again later")
        .retry_after(retry_after_secs)
}

/// A submission over the payload limit (`limit` bytes).
pub fn submission_too_large(limit: u64) -> Error {
    Error::too_large(INVALID_FIELDS, "The submitted data is too large").with("limit", limit)
}

/// Renders platform errors for this service.
pub fn render(e: PlatformError) -> axum::response::Response {
    keel_platform::http::api_error::render::<Wire>(e)
}

impl From<ParamError> for Error {
    fn from(e: ParamError) -> Self {
        match &e {
            ParamError::Invalid { field, problem } => {
                let mut params = Map::new();
                params.insert(field.clone(), Value::from(problem.as_str()));
                Error::bad_request(REST_INVALID_PARAM, e.to_string())
                    .with("params", Value::Object(params))
            }
            ParamError::Missing { field } => Error::bad_request(REST_MISSING_PARAM, e.to_string())
                .with("params", vec![field.clone()]),
        }
    }
}

impl From<InvalidSetting> for Error {
    fn from(e: InvalidSetting) -> Self {
        let key = e.key.clone();
        invalid_param(e.to_string()).with("params", vec![key])
    }
}

impl From<SettingsError> for Error {
    fn from(e: SettingsError) -> Self {
        match e {
            SettingsError::Invalid(i) => Error::from(i),
            SettingsError::Db(db) => Error::from(db),
        }
    }
}

impl From<AppCheckError> for Error {
    fn from(e: AppCheckError) -> Self {
        match e {
            AppCheckError::Failed(_) => Error::forbidden(APPCHECK_FAILED, e.to_string()),
            // 503: the keys are away, not the app's fault.
            AppCheckError::KeysUnavailable(cause) => Error::internal(cause),
        }
    }
}

impl From<BadDefinition> for Error {
    fn from(e: BadDefinition) -> Self {
        invalid_param(e.0)
    }
}

impl From<SubmissionError> for Error {
    fn from(e: SubmissionError) -> Self {
        match e {
            SubmissionError::MissingFields => Error::bad_request(MISSING_FIELDS, e.to_string()),
            SubmissionError::InvalidFields(ref fields) => {
                let fields = fields.clone();
                Error::bad_request(INVALID_FIELDS, e.to_string()).with("fields", fields)
            }
            SubmissionError::InvalidEmail(ref fields) => {
                let fields = fields.clone();
                Error::bad_request(INVALID_EMAIL, e.to_string()).with("fields", fields)
            }
        }
    }
}

impl From<SiteError> for Error {
    fn from(e: SiteError) -> Self {
        match e {
            SiteError::BadDefinition(b) => Error::from(b),
            SiteError::Broken(cause) => Error::internal(cause),
            SiteError::Db(db) => Error::from(db),
        }
    }
}

impl From<SendError> for Error {
    fn from(e: SendError) -> Self {
        match e {
            SendError::NotFound => Error::not_found(SEND_NOT_FOUND, e.to_string()),
            SendError::NotCancellable(_) => Error::conflict(NOT_CANCELLABLE, e.to_string()),
            SendError::NoRecipients => Error::bad_request(NO_RECIPIENTS, e.to_string()),
            SendError::KeyReused => Error::api(
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                IDEMPOTENCY_KEY_REUSED,
                e.to_string(),
            ),
            SendError::Broken(cause) => Error::internal(cause),
            SendError::Db(db) => Error::from(db),
        }
    }
}

impl From<InvalidFile> for Error {
    fn from(e: InvalidFile) -> Self {
        Error::bad_request(INVALID_FILE_TYPE, e.to_string())
    }
}

impl From<ImportError> for Error {
    fn from(e: ImportError) -> Self {
        match e {
            ImportError::InvalidFile(f) => Error::from(f),
            ImportError::Db(db) => Error::from(db),
        }
    }
}

impl From<AdminError> for Error {
    fn from(e: AdminError) -> Self {
        match e {
            AdminError::BadUsername => Error::bad_request(INVALID_USERNAME, e.to_string()),
            AdminError::UserExists(_) => Error::conflict(EXISTING_USER_LOGIN, e.to_string()),
            AdminError::NoUser(_) => Error::not_found(INVALID_USERNAME, e.to_string()),
            AdminError::BadName | AdminError::NoCapability(_) => invalid_param(e.to_string()),
            AdminError::DuplicateName { .. } => {
                Error::conflict(DUPLICATE_APP_PASSWORD, e.to_string())
            }
            AdminError::Hash(h) => Error::internal(h),
            AdminError::Db(db) => Error::from(db),
        }
    }
}
