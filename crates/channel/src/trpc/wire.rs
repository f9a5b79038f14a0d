//! What one HTTP request to `/api/trpc` answers, in tRPC v11's wire
//! format (`@trpc/server` is the reference; its answers were compared byte
//! for byte): a JSON envelope or array of them, or, for a batch sent with
//! `trpc-accept: application/jsonl` (`httpBatchStreamLink`), a JSON Lines
//! stream that starts with a head of placeholders and goes on with one
//! line per value as it resolves.
//!
//! The JSONL encoding, for a batch of `n` calls: the head
//! `{"0":[[0],[null,0,0]],...,"n-1":[[0],[null,0,n-1]]}` (call `i` is a
//! promise with chunk id `i`); then, for a call that succeeded, three
//! lines, `[i,0,[[{"result":0}],["result",0,a]]]`,
//! `[a,0,[[{"data":0}],["data",0,b]]]` and `[b,0,[[<data>]]]`, where `a` and
//! `b` are the next free chunk ids; for a call that failed, one line
//! `[i,0,[[{"error":<shape>}]]]`. A transformer applies to each line as a
//! whole (superjson: `{"json":<line>}`); in the JSON format it applies to
//! the data and to the error shape (`{"error":{"json":<shape>}}`).

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::stream::{FuturesUnordered, StreamExt};
use keel_platform::http::{ClientError, STREAMING, WireShape};
use serde_json::{Value, json};

use super::Settings;
use super::error::{Error, Trpc};

/// One call's outcome.
pub struct Outcome {
    pub status: StatusCode,
    /// The data, or the error shape `{message, code, data}`.
    pub result: Result<Value, Value>,
    /// The wait an error asks for (`Retry-After`).
    pub retry_after: Option<u64>,
}

impl Outcome {
    /// Call `path`'s outcome.
    pub fn of(path: &str, out: Result<Value, Error>) -> Self {
        match out {
            Ok(data) => Self {
                status: StatusCode::OK,
                result: Ok(data),
                retry_after: None,
            },
            Err(e) => {
                let ClientError {
                    status,
                    code,
                    message,
                    mut data,
                } = e.into_client();
                let retry_after = data.get("retry_after").and_then(Value::as_u64);
                if !path.is_empty() {
                    data.insert("path".to_owned(), Value::from(path));
                }
                let mut envelope = Trpc::body(status, code, &message, &data);
                Self {
                    status,
                    result: Err(envelope["error"].take()),
                    retry_after,
                }
            }
        }
    }

    /// The JSON envelope, the transformer applied.
    fn envelope(self, settings: Settings) -> Value {
        let encode = |v| settings.transformer.encode(v);
        match self.result {
            Ok(data) => json!({"result": {"data": encode(data)}}),
            Err(shape) => json!({"error": encode(shape)}),
        }
    }
}

/// The headers every tRPC answer carries.
fn common(resp: &mut Response) {
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::VARY,
        HeaderValue::from_static("trpc-accept, accept"),
    );
}

fn with_cookies(mut resp: Response, cookies: Vec<HeaderValue>) -> Response {
    for c in cookies {
        resp.headers_mut().append(header::SET_COOKIE, c);
    }
    resp
}

/// An error of the whole request (before any call ran): one envelope,
/// whatever the format asked for, as `@trpc/server` answers.
pub fn request_error(settings: Settings, e: Error) -> Response {
    let o = Outcome::of("", Err(e));
    let status = o.status;
    let retry = o.retry_after;
    let mut resp = (status, keel_platform::http::Json(o.envelope(settings))).into_response();
    common(&mut resp);
    if let Some(secs) = retry {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    resp
}

/// The JSON answer: one envelope, or an array of them for a batch; the
/// calls' common status, or 207 when they differ.
pub fn json(
    settings: Settings,
    batch: bool,
    outcomes: Vec<Outcome>,
    cookies: Vec<HeaderValue>,
) -> Response {
    let retry_after = outcomes.iter().filter_map(|o| o.retry_after).max();
    let status = match outcomes.first() {
        Some(first) if outcomes.iter().all(|o| o.status == first.status) => first.status,
        Some(_) => StatusCode::MULTI_STATUS,
        None => StatusCode::OK,
    };
    let mut bodies = outcomes.into_iter().map(|o| o.envelope(settings));
    let body = if batch {
        Value::Array(bodies.collect())
    } else {
        bodies.next().unwrap_or(Value::Null)
    };
    let mut resp = (status, keel_platform::http::Json(body)).into_response();
    common(&mut resp);
    if let Some(secs) = retry_after {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    with_cookies(resp, cookies)
}

/// The next free chunk id of a JSONL answer.
struct Chunks(usize);

impl Chunks {
    fn next(&mut self) -> usize {
        let id = self.0;
        self.0 += 1;
        id
    }
}

/// `{"0":[[0],[null,0,0]],...}` for `n` calls (keys in numeric order, as
/// a JavaScript object has them).
fn head(n: usize) -> String {
    let entries: Vec<String> = (0..n)
        .map(|i| format!("\"{i}\":[[0],[null,0,{i}]]"))
        .collect();
    format!("{{{}}}", entries.join(","))
}

/// The lines of call `i`'s outcome.
fn lines(i: usize, result: Result<Value, Value>, ids: &mut Chunks) -> Vec<String> {
    match result {
        Ok(data) => {
            let (a, b) = (ids.next(), ids.next());
            vec![
                format!("[{i},0,[[{{\"result\":0}}],[\"result\",0,{a}]]]"),
                format!("[{a},0,[[{{\"data\":0}}],[\"data\",0,{b}]]]"),
                format!("[{b},0,[[{data}]]]"),
            ]
        }
        Err(shape) => vec![format!("[{i},0,[[{}]]]", json!({"error": shape}))],
    }
}

/// One line on the wire: the transformer applied, then a newline.
fn framed(settings: Settings, line: &str) -> Bytes {
    let mut out = settings.transformer.encode_line(line);
    out.push('\n');
    Bytes::from(out)
}

/// While calls run, a space goes out this often (tRPC's `pingMs`; a
/// client reads it as whitespace before the next line). It keeps proxies
/// from timing the stream out, and a write to a client that has gone away
/// fails, which ends the stream and the calls still running: without it
/// they would run on until they finished by themselves.
const PING: std::time::Duration = std::time::Duration::from_secs(1);

/// What the JSONL body still has to send.
struct Pending<F> {
    running: FuturesUnordered<F>,
    ids: Chunks,
    ping: tokio::time::Interval,
    settings: Settings,
}

/// The next piece of the body: a finished call's lines, or a ping.
async fn next_piece<F>(mut p: Pending<F>) -> Option<(Bytes, Pending<F>)>
where
    F: std::future::Future<Output = (usize, Outcome)>,
{
    if p.running.is_empty() {
        return None;
    }
    tokio::select! {
        done = p.running.next() => {
            let (i, outcome) = done?;
            let text: Vec<u8> = lines(i, outcome.result, &mut p.ids)
                .iter()
                .flat_map(|l| framed(p.settings, l).to_vec())
                .collect();
            Some((Bytes::from(text), p))
        }
        _ = p.ping.tick() => Some((Bytes::from_static(b" "), p)),
    }
}

/// The JSONL answer. The head goes out at once; each call's lines follow as
/// it completes. Always 200 (the outcomes are not known when the status
/// is sent); errors are in their lines. A client that goes away drops the
/// stream (at the next ping at the latest) and with it the calls still
/// running.
pub fn jsonl<F>(settings: Settings, calls: Vec<F>, cookies: Vec<HeaderValue>) -> Response
where
    F: std::future::Future<Output = (usize, Outcome)> + Send + 'static,
{
    let n = calls.len();
    let first = futures::stream::once({
        let line = framed(settings, &head(n));
        async move { line }
    });
    let pending = Pending {
        running: calls.into_iter().collect(),
        ids: Chunks(n),
        ping: tokio::time::interval_at(tokio::time::Instant::now() + PING, PING),
        settings,
    };
    let rest = futures::stream::unfold(pending, next_piece);
    let body = first.chain(rest).map(Ok::<_, std::io::Error>);
    let mut resp = (
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            STREAMING,
        ],
        keel_platform::http::stream_body(body),
    )
        .into_response();
    common(&mut resp);
    with_cookies(resp, cookies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_and_lines_are_trpcs() {
        assert_eq!(head(2), r#"{"0":[[0],[null,0,0]],"1":[[0],[null,0,1]]}"#);
        let mut ids = Chunks(2);
        assert_eq!(
            lines(0, Ok(json!({"isLive": false})), &mut ids),
            [
                r#"[0,0,[[{"result":0}],["result",0,2]]]"#,
                r#"[2,0,[[{"data":0}],["data",0,3]]]"#,
                r#"[3,0,[[{"isLive":false}]]]"#,
            ]
        );
        assert_eq!(
            lines(1, Err(json!({"message": "m"})), &mut ids),
            [r#"[1,0,[[{"error":{"message":"m"}}]]]"#]
        );
        assert_eq!(ids.0, 4);
    }
}
