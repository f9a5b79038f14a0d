//! The console's extractors, for the console and every area: `Body<T>`
//! (JSON), `RawBody` and `Params<T>` (the query string), their failures in
//! the console's shape, naming the field.

use crate::http::input::Formats;

use super::Error;

crate::body_extractors!(Error, Formats::JSON);
