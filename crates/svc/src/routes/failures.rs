//! Failure answers several routes share, documented once: each route lists
//! these by name in its `responses(...)` beside its own.

keel_platform::failures! {
    /// An administrator route without an administrator.
    pub NotAdmin {
        401 => "rest_not_logged_in (no credentials) or incorrect_password (a wrong application password)",
        403 => "rest_forbidden (no svc_manage) or rest_cookie_invalid_nonce (a session cookie without its nonce)",
    }

    /// A push administration route without an administrator, or with the
    /// push module off.
    pub NotPushAdmin {
        403 => "svc_push_forbidden: no credentials, wrong ones, or no svc_manage",
        404 => "rest_no_route: the push module is off",
    }

    /// The App Check token is missing or refused.
    pub AppCheckFailed {
        403 => "appcheck_failed",
    }

    /// The push module is off.
    pub PushOff {
        404 => "rest_no_route: the push module is off",
    }

    /// `page` or `per_page` out of range.
    pub BadPage {
        400 => "rest_invalid_param: page must be 1 to 1000000 and per_page 1 to 100",
    }

    /// No such form.
    pub NoSuchForm {
        404 => "form_not_found",
    }
}
