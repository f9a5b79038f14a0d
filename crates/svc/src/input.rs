//! Request bodies of the public and push routes: JSON, a urlencoded form or
//! multipart form fields, as the host site's REST convention accepts them
//! (see `keel_platform::http::input`), read into their types so the same
//! checks and errors apply whatever the format.

use keel_platform::http::input::Formats;

use crate::error::Error;

keel_platform::body_extractor!(
    /// A body in any format the public and push routes take (JSON, a
    /// urlencoded form with bracketed keys, multipart fields), read into
    /// its type; a field at fault is named (see `error.rs`).
    pub AnyBody,
    Error,
    Formats::ANY
);

// `Body<T>`: a JSON body of the admin routes read into its type (a field
// of the wrong type is a 400 in the namespace's shape naming the field).
// `RawBody`: a body read whatever its type (the push token's carriers).
keel_platform::body_extractors!(Error, Formats::JSON);
