//! channel-api's JSON bodies outside tRPC (sign-in), read into their type;
//! a wrong field is a BAD_REQUEST naming it.

use keel_platform::http::input::Formats;

use crate::error::Error;

keel_platform::body_extractor!(
    /// A JSON body read into its type.
    pub Body,
    Error,
    Formats::JSON
);

keel_platform::bytes_extractor!(
    /// A raw body (the webhook's signed bytes, a tRPC call's input).
    pub RawBody,
    Error
);
