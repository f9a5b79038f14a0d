//! Request bodies of the public and push routes: JSON, a urlencoded form or
//! multipart form fields, as the host site's REST convention accepts them
//! (see `keel_platform::http::input`), each read into one JSON object so
//! the same checks and errors apply whatever the format.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use keel_platform::http::PlatformError;
use keel_platform::http::input::{self, Formats};
use serde_json::{Map, Value};

use crate::error::{self, Error};

/// The body's fields as a JSON object.
pub struct Fields(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for Fields {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Error> {
        let headers = req.headers().clone();
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|r| Error::from(PlatformError::from_rejection(r.status(), r.body_text())))?;
        match input::parse(&headers, bytes, Formats::ANY).await? {
            Value::Object(map) => Ok(Self(map)),
            _ => Err(error::not_an_object()),
        }
    }
}

// `Body<T>`: a JSON body of the admin routes read into its type (a field
// of the wrong type is a 400 in the namespace's shape naming the field).
// `RawBody`: a body read whatever its type (the push token's carriers).
keel_platform::body_extractors!(Error, Formats::JSON);
