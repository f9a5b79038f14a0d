//! Failure answers several routes share, documented once: each route lists
//! these by name in its `responses(...)` beside its own.

use crate::error::code::*;

keel_platform::failures! {
    /// An administrator route without an administrator.
    pub NotAdmin {
        401 => format!("{REST_NOT_LOGGED_IN} (no credentials) or {INCORRECT_PASSWORD} (a wrong application password)"),
        403 => format!("{REST_FORBIDDEN} (no svc_manage) or {REST_COOKIE_INVALID_NONCE} (a session cookie without its nonce)"),
    }

    /// A push administration route without an administrator, or with the
    /// push module off.
    pub NotPushAdmin {
        403 => format!("{PUSH_FORBIDDEN}: no credentials, wrong ones, or no svc_manage"),
        404 => format!("{REST_NO_ROUTE}: the push module is off"),
    }

    /// The App Check token is missing or refused.
    pub AppCheckFailed {
        403 => APPCHECK_FAILED,
    }

    /// The push module is off.
    pub PushOff {
        404 => format!("{REST_NO_ROUTE}: the push module is off"),
    }

    /// `page` or `per_page` out of range.
    pub BadPage {
        400 => format!("{REST_INVALID_PARAM}: page must be 1 to 1000000 and per_page 1 to 100"),
    }

    /// No such form.
    pub NoSuchForm {
        404 => FORM_NOT_FOUND,
    }

    /// A route managing the other users without an administrator who may.
    pub NotAdminOfAdmins {
        401 => format!("{REST_NOT_LOGGED_IN} (no credentials) or {INCORRECT_PASSWORD} (a wrong application password)"),
        403 => format!("{REST_FORBIDDEN} (no svc_manage_admins; or disabling or removing oneself, which the command line does) or {REST_COOKIE_INVALID_NONCE} (a session cookie without its nonce)"),
    }

    /// No user has that username.
    pub NoSuchUser {
        404 => INVALID_USERNAME,
    }
}
