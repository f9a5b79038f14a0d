//! Request bodies as the services' clients send them: JSON, or the fields
//! of an HTML form (`application/x-www-form-urlencoded`, or the text parts
//! of `multipart/form-data`), which the host-site convention accepts on
//! every route. Form fields use the PHP/WordPress bracket syntax for
//! structure: `fields[name]=Ada` is `{"fields": {"name": "Ada"}}` and
//! `tokens[]=a&tokens[]=b` is `{"tokens": ["a", "b"]}`; every form value is
//! a string. Either way the result is one JSON value, checked afterwards by
//! the same code.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use http::HeaderMap;
use http::header::CONTENT_TYPE;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::PlatformError;

/// Why a body could not be read into its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// Unreadable, too large, of a type the route does not take, or not
    /// valid for its format.
    Body(PlatformError),
    /// Read, but a field is wrong: its path (`thresholds[0].value`) and what
    /// is wrong with it.
    Field { path: String, problem: String },
}

impl InputError {
    /// As the platform error a service would render by default.
    pub fn into_platform(self) -> PlatformError {
        match self {
            Self::Body(p) => p,
            Self::Field { path, problem } if path.is_empty() => {
                PlatformError::BadRequest(format!("The body is invalid: {problem}"))
            }
            Self::Field { path, problem } => {
                PlatformError::BadRequest(format!("{path} is invalid: {problem}"))
            }
        }
    }
}

impl From<PlatformError> for InputError {
    fn from(e: PlatformError) -> Self {
        Self::Body(e)
    }
}

pub use crate::values::{is_blank, whole};

/// Reads the request's body into `T` by its content type (one of
/// `formats`), naming the failing field.
pub async fn read<T: DeserializeOwned, St: Send + Sync>(
    req: Request,
    state: &St,
    formats: Formats,
) -> Result<T, InputError> {
    let headers = req.headers().clone();
    let bytes = Bytes::from_request(req, state)
        .await
        .map_err(|r| InputError::from(PlatformError::from_rejection(r.status(), r.body_text())))?;
    typed(&headers, bytes, formats).await
}

/// Reads `bytes` by content type into `T`, naming the failing field.
pub async fn typed<T: DeserializeOwned>(
    headers: &HeaderMap,
    bytes: Bytes,
    formats: Formats,
) -> Result<T, InputError> {
    let value = parse(headers, bytes, formats).await?;
    if !value.is_object() {
        return Err(InputError::Body(PlatformError::BadRequest(
            "The body must be a JSON object".to_owned(),
        )));
    }
    from_value(value)
}

/// `value` into `T`, naming the failing field.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, InputError> {
    crate::values::read(value).map_err(|f| InputError::Field {
        path: f.path,
        problem: f.problem,
    })
}

/// The body formats a route reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Formats {
    pub json: bool,
    pub form: bool,
    pub multipart: bool,
}

impl Formats {
    pub const JSON: Self = Self {
        json: true,
        form: false,
        multipart: false,
    };
    /// JSON or an urlencoded form.
    pub const JSON_OR_FORM: Self = Self {
        json: true,
        form: true,
        multipart: false,
    };
    /// JSON, urlencoded forms and multipart form fields.
    pub const ANY: Self = Self {
        json: true,
        form: true,
        multipart: true,
    };

    fn accepted(self) -> String {
        let mut names = Vec::new();
        if self.json {
            names.push("application/json");
        }
        if self.form {
            names.push("application/x-www-form-urlencoded");
        }
        if self.multipart {
            names.push("multipart/form-data");
        }
        names.join(" or ")
    }
}

/// The media type of `Content-Type`, lower-cased, without parameters.
pub fn media_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
}

fn is_json(media: &str) -> bool {
    media == "application/json" || media.ends_with("+json")
}

/// Parses `bytes` by the request's `Content-Type`. An empty body without a
/// type is an empty object (a route whose fields are all optional, or that
/// takes them from the query string).
pub async fn parse(
    headers: &HeaderMap,
    bytes: Bytes,
    formats: Formats,
) -> Result<Value, PlatformError> {
    let value = parse_any(headers, bytes, formats).await?;
    refuse_nul(&value)?;
    Ok(value)
}

/// Refuses a value holding the NUL character (U+0000) in any string or
/// key: no text keel stores may hold one (PostgreSQL's cannot), so every
/// service refuses it at the edge, the same on either database.
pub fn refuse_nul(v: &Value) -> Result<(), PlatformError> {
    let nul = |s: &str| s.contains('\0');
    let found = match v {
        Value::String(s) => nul(s),
        Value::Array(items) => return items.iter().try_for_each(refuse_nul),
        Value::Object(map) => {
            if map.keys().any(|k| nul(k)) {
                true
            } else {
                return map.values().try_for_each(refuse_nul);
            }
        }
        _ => false,
    };
    if found {
        Err(PlatformError::BadRequest(NUL_REFUSED.to_owned()))
    } else {
        Ok(())
    }
}

/// What a request holding the NUL character is told.
pub const NUL_REFUSED: &str = "The request must not contain the NUL character (U+0000)";

async fn parse_any(
    headers: &HeaderMap,
    bytes: Bytes,
    formats: Formats,
) -> Result<Value, PlatformError> {
    let media = media_type(headers);
    match media.as_deref() {
        None if bytes.iter().all(u8::is_ascii_whitespace) => Ok(Value::Object(Map::new())),
        Some(m) if formats.json && is_json(m) => serde_json::from_slice(&bytes)
            .map_err(|e| PlatformError::BadRequest(format!("The body is not valid JSON: {e}"))),
        Some("application/x-www-form-urlencoded") if formats.form => Ok(from_pairs(
            form_urlencoded::parse(&bytes).map(|(k, v)| (k.into_owned(), v.into_owned())),
        )),
        Some("multipart/form-data") if formats.multipart => multipart(headers, bytes).await,
        _ => Err(PlatformError::UnsupportedMediaType(format!(
            "Content-Type must be {}",
            formats.accepted()
        ))),
    }
}

/// The text fields of a multipart body (file parts are read as text too).
async fn multipart(headers: &HeaderMap, bytes: Bytes) -> Result<Value, PlatformError> {
    let ctype = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let boundary = multer::parse_boundary(ctype)
        .map_err(|e| PlatformError::BadRequest(format!("The multipart body is invalid: {e}")))?;
    let stream = futures::stream::once(async move { Ok::<_, std::convert::Infallible>(bytes) });
    let mut form = multer::Multipart::new(stream, boundary);
    let mut pairs = Vec::new();
    let bad =
        |e: multer::Error| PlatformError::BadRequest(format!("The multipart body is invalid: {e}"));
    while let Some(field) = form.next_field().await.map_err(bad)? {
        let name = field.name().unwrap_or_default().to_owned();
        // A part sent as JSON (how OpenAPI encodes an object or array
        // property of a multipart body) is its JSON value; any other is text.
        let json = field
            .content_type()
            .is_some_and(|m| is_json(m.essence_str()));
        let text = field.text().await.map_err(bad)?;
        let value = if json {
            serde_json::from_str(&text).map_err(|e| {
                PlatformError::BadRequest(format!(
                    "The multipart part {name:?} is not valid JSON: {e}"
                ))
            })?
        } else {
            Value::String(text)
        };
        pairs.push((name, value));
    }
    Ok(from_values(pairs.into_iter()))
}

/// Form pairs as one JSON object, brackets making structure.
pub fn from_pairs(pairs: impl Iterator<Item = (String, String)>) -> Value {
    from_values(pairs.map(|(k, v)| (k, Value::String(v))))
}

/// Form fields as one JSON object, brackets in their names making structure.
fn from_values(pairs: impl Iterator<Item = (String, Value)>) -> Value {
    let mut root = Value::Object(Map::new());
    for (key, value) in pairs {
        let path = key_path(&key);
        insert(&mut root, &path, value);
    }
    root
}

/// `a[b][]` → `["a", "b", ""]`; a key without brackets is itself.
fn key_path(key: &str) -> Vec<&str> {
    let Some(open) = key.find('[').filter(|&i| i > 0 && key.ends_with(']')) else {
        return vec![key];
    };
    let mut path = vec![&key[..open]];
    let rest = &key[open + 1..key.len() - 1];
    path.extend(rest.split("]["));
    path
}

/// Puts `value` at `path` under `node`; `""` segments append to an array.
/// A later value for the same plain key replaces the earlier one.
fn insert(node: &mut Value, path: &[&str], value: Value) {
    let Some((first, rest)) = path.split_first() else {
        *node = value;
        return;
    };
    if first.is_empty() {
        if !node.is_array() {
            *node = Value::Array(Vec::new());
        }
        if let Value::Array(items) = node {
            let mut slot = Value::Null;
            insert(&mut slot, rest, value);
            items.push(slot);
        }
        return;
    }
    if !node.is_object() {
        *node = Value::Object(Map::new());
    }
    if let Value::Object(map) = node {
        let child = map.entry((*first).to_owned()).or_insert(Value::Null);
        insert(child, rest, value);
    }
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
