//! JSON bodies, checked in the documented order: first that every required field
//! is present (`Missing required field: <field>`; absent, `null` and blank
//! strings count as missing), then each value, read into its typed field
//! (`Invalid field: <field> <problem>`).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use keel_platform::http::PlatformError;
use keel_platform::http::input::{self, media_type};
use keel_platform::values::RequiredFields;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{self, Error};

keel_platform::query_extractor!(
    /// The query string read into its type (a failure in the service's shape).
    pub Params,
    Error
);

/// A JSON object body (`Content-Type: application/json`).
pub struct JsonObject(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Error> {
        let json = media_type(req.headers())
            .is_some_and(|t| t == "application/json" || t.ends_with("+json"));
        if !json {
            return Err(error::not_json_content());
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|r| Error::from(PlatformError::from_rejection(r.status(), r.body_text())))?;
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(v @ Value::Object(_)) if input::refuse_nul(&v).is_err() => Err(error::nul_refused()),
            Ok(Value::Object(map)) => Ok(Self(map)),
            Ok(_) => Err(error::not_an_object()),
            Err(e) => Err(error::not_json(&e)),
        }
    }
}

impl JsonObject {
    /// The body as `T`, once each field `T` requires is present.
    pub fn read<T: DeserializeOwned + RequiredFields>(self) -> Result<T, Error> {
        require(&self.0, T::required_fields())?;
        typed(self.0)
    }
}

/// A JSON object body read into `T`: first each field `T` requires (as its
/// document says) is present, then each value is read into its field.
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + RequiredFields> FromRequest<S> for Body<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Error> {
        JsonObject::from_request(req, state).await?.read().map(Body)
    }
}

/// `map` as `T`, naming the field at fault.
pub fn typed<T: DeserializeOwned>(map: Map<String, Value>) -> Result<T, Error> {
    input::from_value(Value::Object(map)).map_err(Error::from)
}

/// Presence before format: the first of `fields` that is missing.
pub fn require<F: AsRef<str>>(obj: &Map<String, Value>, fields: &[F]) -> Result<(), Error> {
    Ok(crate::domain::values::require(obj, fields)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn blank_strings_are_missing_and_presence_comes_before_format() {
        let o = obj(json!({"device_token": "abc", "e": "", "w": "  ", "zero": 0, "no": false}));
        let msg = |e: Error| e.to_string();
        assert_eq!(
            msg(require(&o, &["e"]).unwrap_err()),
            "Missing required field: e"
        );
        assert_eq!(
            msg(require(&o, &["w"]).unwrap_err()),
            "Missing required field: w"
        );
        assert_eq!(
            msg(require(&o, &["device_token", "platform"]).unwrap_err()),
            "Missing required field: platform"
        );
        assert!(require(&o, &["zero", "no", "device_token"]).is_ok());
    }
}
