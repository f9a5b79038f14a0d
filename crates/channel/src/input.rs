//! channel-api's JSON bodies outside tRPC (sign-in), read into their type;
//! a wrong field is a BAD_REQUEST naming it.

use keel_platform::http::input::Formats;

use crate::error::Error;

// `Body<T>`: a JSON body read into its type. `RawBody`: the webhook's
// signed bytes, a tRPC call's input.
keel_platform::body_extractors!(Error, Formats::JSON);
