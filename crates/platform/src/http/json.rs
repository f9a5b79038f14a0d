//! `Json`: a JSON response body, as `axum::Json` answers, written faster.
//!
//! axum's `Json` serializes through a `BytesMut` writer that starts at 128
//! bytes: every token is a separate `put_slice` with its capacity checks,
//! and a page of events (16 KiB) regrows the buffer eight times. Profiled
//! under load on `GET /history`, that was 13 % of the process's time. This
//! one serializes into a `Vec` (whose writes are plain copies) and hands
//! it to the body without a copy. A value that cannot be serialized answers as axum's does: 500,
//! `text/plain`, the serializer's message.

use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A JSON response (`Content-Type: application/json`).
#[derive(Debug, Clone, Copy, Default)]
#[must_use]
pub struct Json<T>(pub T);

/// Most bodies fit; a longer one grows by doubling (a 16 KiB page: four
/// regrowths, about a microsecond of copying).
const INITIAL_CAPACITY: usize = 1024;

/// Appends `value` as JSON to `buf`, as [`Json`] writes a body: for
/// responses written in parts.
pub fn to_writer<T: Serialize + ?Sized>(buf: &mut Vec<u8>, value: &T) -> Result<(), JsonError> {
    Ok(sonic_rs::to_writer(buf, value)?)
}

/// A value that cannot be written as JSON (a map with non-string keys).
#[derive(Debug, thiserror::Error)]
#[error("cannot write JSON")]
pub struct JsonError(#[from] sonic_rs::Error);

/// A body already written as JSON (with [`to_writer`], in parts), sent as
/// [`Json`] sends its own.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct JsonBytes(pub Vec<u8>);

impl IntoResponse for JsonBytes {
    fn into_response(self) -> Response {
        (
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            self.0,
        )
            .into_response()
    }
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let mut buf = Vec::with_capacity(INITIAL_CAPACITY);
        match to_writer(&mut buf, &self.0) {
            Ok(()) => JsonBytes(buf).into_response(),
            Err(e) => {
                tracing::error!(error = %crate::failure::chain(&e), "an answer could not be written");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    [(
                        CONTENT_TYPE,
                        HeaderValue::from_static("text/plain; charset=utf-8"),
                    )],
                    e.to_string(),
                )
                    .into_response()
            }
        }
    }
}

impl<T> From<T> for Json<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    async fn body(resp: Response) -> (StatusCode, Option<HeaderValue>, String) {
        let status = resp.status();
        let ct = resp.headers().get(CONTENT_TYPE).cloned();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap_or_default();
        (status, ct, String::from_utf8_lossy(&bytes).into_owned())
    }

    #[tokio::test]
    async fn answers_the_same_bytes_and_headers_as_axum_json() {
        let value = serde_json::json!({"events": [{"a": 1.5e-7, "b": "x\"y\u{1}"}], "n": null});
        let ours = body(Json(&value).into_response()).await;
        let axums = body(axum::Json(&value).into_response()).await;
        assert_eq!(ours, axums);
        let long = serde_json::json!({"items": vec!["an item of the page"; 2000]});
        let ours = body(Json(&long).into_response()).await;
        assert_eq!(ours, body(axum::Json(&long).into_response()).await);
    }

    /// Random JSON trees: every string escape, every float magnitude, the
    /// integer extremes, nesting.
    fn random_value(x: &mut u64, depth: u32) -> serde_json::Value {
        use serde_json::Value;
        let mut next = || {
            *x ^= *x << 13;
            *x ^= *x >> 7;
            *x ^= *x << 17;
            *x
        };
        let pick = next() % if depth > 3 { 6 } else { 8 };
        match pick {
            0 => Value::Null,
            1 => Value::Bool(next() % 2 == 0),
            2 => {
                let n = next();
                let v = [n, n % 1000, u64::MAX, 0][usize::try_from(n % 4).unwrap_or(0)];
                Value::from(v)
            }
            3 => {
                let n = next();
                Value::from(
                    [i64::MIN, -1, 0, i64::MAX, (n as i64) >> 3]
                        [usize::try_from(n % 5).unwrap_or(0)],
                )
            }
            4 => {
                let f = f64::from_bits(next());
                let f = if f.is_finite() { f } else { 0.5 };
                let g = [f, 0.1 + 0.2, 1e-7, 1e21, 123.0, -0.0, 5e-324, f64::MAX];
                serde_json::Number::from_f64(g[usize::try_from(next() % 8).unwrap_or(0)])
                    .map_or(Value::Null, Value::Number)
            }
            5 => {
                let len = next() % 40;
                let s: String = (0..len)
                    .filter_map(|_| {
                        let n = next();
                        let c = match n % 4 {
                            0 => u32::try_from(n % 0x20).unwrap_or(0),
                            1 => u32::try_from(0x20 + n % 0x60).unwrap_or(0),
                            2 => [0x22, 0x5c, 0x2f, 0x7f, 0x2028, 0xe9]
                                [usize::try_from(n % 6).unwrap_or(0)],
                            _ => u32::try_from(n % 0x11_0000).unwrap_or(0),
                        };
                        char::from_u32(c)
                    })
                    .collect();
                Value::String(s)
            }
            6 => Value::Array(
                (0..next() % 5)
                    .map(|_| random_value(x, depth + 1))
                    .collect(),
            ),
            _ => {
                let mut m = serde_json::Map::new();
                for i in 0..next() % 5 {
                    let key = match random_value(x, 99) {
                        Value::String(s) => s,
                        _ => format!("k{i}"),
                    };
                    m.insert(key, random_value(x, depth + 1));
                }
                Value::Object(m)
            }
        }
    }

    #[test]
    fn writes_exactly_what_serde_json_writes() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..20_000 {
            let v = random_value(&mut x, 0);
            let mut ours = Vec::new();
            to_writer(&mut ours, &v).unwrap_or_default();
            let theirs = serde_json::to_vec(&v).unwrap_or_default();
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs)
            );
        }
        // Typed values: structs, options, floats and chrono through serde.
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Typed {
            a_float: f32,
            missing: Option<u8>,
            #[serde(skip_serializing_if = "Option::is_none")]
            skipped: Option<u8>,
            list: Vec<(u8, String)>,
            unit: (),
        }
        let t = Typed {
            a_float: 0.1,
            missing: None,
            skipped: None,
            list: vec![(1, "\u{0}".to_owned())],
            unit: (),
        };
        let mut ours = Vec::new();
        to_writer(&mut ours, &t).unwrap_or_default();
        assert_eq!(ours, serde_json::to_vec(&t).unwrap_or_default());
    }

    #[tokio::test]
    async fn a_value_that_cannot_be_serialized_is_a_plain_500() {
        let mut bad = BTreeMap::new();
        bad.insert((1, 2), "tuple keys are not JSON");
        let (status, ct, text) = body(Json(bad).into_response()).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            ct,
            Some(HeaderValue::from_static("text/plain; charset=utf-8"))
        );
        // The cause is logged, not sent.
        assert_eq!(text, "cannot write JSON");
    }
}
