//! An answer as the integration tests read it: status, headers, the body's
//! text and its JSON, and the error code where the service's error shape
//! keeps it.

use std::fmt;
use std::marker::PhantomData;

use serde_json::Value;

/// Where a service's error body keeps its code.
pub trait ErrorShape {
    /// The code of an error body (empty when there is none).
    fn code(body: &Value) -> &str;
}

/// `{"code": "...", "message": "..."}` (accounts, svc).
pub struct CodeField;

impl ErrorShape for CodeField {
    fn code(body: &Value) -> &str {
        body["code"].as_str().unwrap_or_default()
    }
}

/// `{"error": "..."}` (usage-alerts): the error text is its code.
pub struct ErrorText;

impl ErrorShape for ErrorText {
    fn code(body: &Value) -> &str {
        body["error"].as_str().unwrap_or_default()
    }
}

/// tRPC's envelope, `{"error": {"data": {"code": "..."}}}` (channel-api).
pub struct Trpc;

impl ErrorShape for Trpc {
    fn code(body: &Value) -> &str {
        body["error"]["data"]["code"].as_str().unwrap_or_default()
    }
}

/// A read answer.
pub struct Resp<S> {
    pub status: u16,
    /// The body as JSON (`Null` when it is not JSON).
    pub body: Value,
    pub text: String,
    pub headers: reqwest::header::HeaderMap,
    shape: PhantomData<fn() -> S>,
}

impl<S: ErrorShape> Resp<S> {
    /// Reads the whole answer.
    pub async fn read(r: reqwest::Response) -> Self {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.expect("the answer's body");
        Self {
            status,
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            text,
            headers,
            shape: PhantomData,
        }
    }

    /// The error's code in the service's shape.
    pub fn code(&self) -> &str {
        S::code(&self.body)
    }
}

impl Resp<Trpc> {
    /// `result.data` of a tRPC success.
    pub fn data(&self) -> &Value {
        &self.body["result"]["data"]
    }
}

impl<S> fmt::Debug for Resp<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resp")
            .field("status", &self.status)
            .field("text", &self.text)
            .finish_non_exhaustive()
    }
}
