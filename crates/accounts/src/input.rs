//! Request bodies: form-urlencoded (the seed's format) or JSON. A field of
//! the wrong type is a 400 naming the field; any other content type is 415.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use keel_platform::http::PlatformError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use crate::error::Error;

/// A body read as form or JSON by its `Content-Type`.
pub struct Input<T>(pub T);

impl<S, T> FromRequest<S> for Input<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Error> {
        let ctype = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            });
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|r| Error::from(PlatformError::from_rejection(r.status(), r.body_text())))?;
        let parsed = match ctype.as_deref() {
            None if bytes.is_empty() => from_form(b""),
            Some("application/x-www-form-urlencoded") => from_form(&bytes),
            Some(t) if t == "application/json" || t.ends_with("+json") => from_json(&bytes),
            _ => {
                return Err(PlatformError::UnsupportedMediaType(
                    "Content-Type must be application/x-www-form-urlencoded or application/json"
                        .to_owned(),
                )
                .into());
            }
        };
        parsed.map(Input)
    }
}

fn from_form<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(bytes));
    serde_path_to_error::deserialize(de).map_err(|e| field_error(&e.path().to_string(), e.inner()))
}

fn from_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    // serde would read a struct from an array too; the API takes objects.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(PlatformError::BadRequest("The body must be a JSON object".to_owned()).into());
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        if e.inner().is_syntax() || e.inner().is_eof() {
            Error::from(PlatformError::BadRequest(format!(
                "The body is not valid JSON: {}",
                e.inner()
            )))
        } else {
            field_error(&e.path().to_string(), e.inner())
        }
    })
}

fn field_error(path: &str, e: &impl std::fmt::Display) -> Error {
    if path.is_empty() || path == "." {
        Error::from(PlatformError::BadRequest(format!(
            "The body is invalid: {e}"
        )))
    } else {
        Error::validation(path, &format!("is invalid: {e}"))
    }
}

/// Accepts a string, or a number written as one (codes typed as numbers).
pub fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        S(String),
        N(u64),
    }
    Ok(Option::<Raw>::deserialize(d)?.map(|r| match r {
        Raw::S(s) => s,
        Raw::N(n) => n.to_string(),
    }))
}

/// A present, non-empty field.
pub fn required(value: Option<String>, field: &str) -> Result<String, Error> {
    match value {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(Error::required(field)),
    }
}
