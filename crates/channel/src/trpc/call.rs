//! One HTTP request to `/api/trpc/<procedures>`: its calls, run, and their
//! answers in tRPC's envelopes.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use keel_platform::http::{ClientError, WireShape};
use serde_json::{Map, Value, json};

use super::{Access, Kind, Procedure};
use crate::auth::{MaybeOwner, same_origin};
use crate::domain::owner::Owner;
use crate::error::{Error, Trpc, trpc};
use crate::input::RawBody;
use crate::state::AppState;

/// What a procedure's handler gets besides its input.
#[derive(Clone)]
pub struct Ctx {
    pub state: AppState,
    pub owner: Option<Owner>,
    pub peer: IpAddr,
    /// `Set-Cookie` values for the response.
    cookies: Arc<Mutex<Vec<HeaderValue>>>,
}

impl Ctx {
    /// Adds a `Set-Cookie` to the response.
    pub fn set_cookie(&self, value: HeaderValue) {
        self.cookies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(value);
    }

    /// The owner, or UNAUTHORIZED.
    pub fn owner(&self) -> Result<&Owner, Error> {
        self.owner
            .as_ref()
            .ok_or_else(|| trpc("UNAUTHORIZED", "Sign in as the channel's owner"))
    }
}

/// One call's outcome: its status, its envelope, and the wait an error
/// asks for (`Retry-After`).
struct Outcome {
    status: StatusCode,
    body: Value,
    retry_after: Option<u64>,
}

fn answer(state: &AppState, name: &str, out: Result<Value, Error>) -> Outcome {
    match out {
        Ok(data) => Outcome {
            status: StatusCode::OK,
            body: json!({"result": {"data": state.wrap(data)}}),
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
            data.insert("path".to_owned(), Value::from(name));
            Outcome {
                status,
                body: Trpc::body(status, code, &message, &data),
                retry_after,
            }
        }
    }
}

/// An error envelope that belongs to no procedure.
fn without_path(mut body: Value) -> Value {
    if let Some(data) = body
        .pointer_mut("/error/data")
        .and_then(Value::as_object_mut)
    {
        data.remove("path");
    }
    body
}

/// A failure before any call ran (the body could not be read).
fn answer_error(state: &AppState, path: &str, e: Error) -> Response {
    let o = answer(state, path, Err(e));
    (o.status, keel_platform::http::Json(o.body)).into_response()
}

/// Runs one call of `p`.
async fn run(
    p: &Procedure,
    ctx: Ctx,
    method: &Method,
    cross_site: bool,
    input: Value,
) -> Result<Value, Error> {
    let wanted = match p.kind {
        Kind::Query => Method::GET,
        Kind::Mutation => Method::POST,
    };
    if *method != wanted {
        return Err(trpc(
            "METHOD_NOT_SUPPORTED",
            format!(
                "{} is a {}: use {wanted}",
                p.name,
                if p.kind == Kind::Query {
                    "query"
                } else {
                    "mutation"
                }
            ),
        ));
    }
    if p.access == Access::Owner {
        ctx.owner()?;
    }
    // Every mutation, the owner's and the set-up alike, comes from the
    // channel's own pages.
    if p.kind == Kind::Mutation && cross_site {
        return Err(trpc("FORBIDDEN", "Cross-site request refused"));
    }
    let state = ctx.state.clone();
    let out = p.call(ctx, input).await;
    if p.kind == Kind::Mutation && out.is_ok() {
        // What getInfo answers may have changed.
        state.info.invalidate();
    }
    out
}

/// The calls' inputs: one per procedure, by position in a batch.
fn inputs(
    state: &AppState,
    batch: bool,
    n: usize,
    raw: Option<&[u8]>,
) -> Result<Vec<Value>, Error> {
    let parsed: Value = match raw {
        None => Value::Null,
        Some(b) if b.iter().all(u8::is_ascii_whitespace) => Value::Null,
        Some(b) => serde_json::from_slice(b)
            .map_err(|e| trpc("PARSE_ERROR", format!("The input is not JSON: {e}")))?,
    };
    if !batch {
        return Ok(vec![state.unwrap(parsed)]);
    }
    let mut by_index = match parsed {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        _ => {
            return Err(trpc(
                "BAD_REQUEST",
                "A batch's input must be an object keyed \"0\", \"1\", ...",
            ));
        }
    };
    Ok((0..n)
        .map(|i| state.unwrap(by_index.remove(&i.to_string()).unwrap_or(Value::Null)))
        .collect())
}

/// `GET|POST /api/trpc/{procedures}`.
pub async fn handle(
    State(state): State<AppState>,
    Path(path): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    method: Method,
    owner: MaybeOwner,
    headers: HeaderMap,
    body: Result<RawBody, Error>,
) -> Response {
    let body = match body {
        Ok(RawBody(b)) => b,
        Err(e) => return answer_error(&state, &path, e),
    };
    let batch = query.get("batch").is_some_and(|b| b == "1");
    let names: Vec<&str> = if batch {
        path.split(',').collect()
    } else {
        vec![path.as_str()]
    };
    if names.len() > state.cfg.max_batch {
        // As @trpc/server's `maxBatchSize`: the whole request, no path.
        let e = trpc("BAD_REQUEST", "Batch call exceeds maximum size");
        let o = answer(&state, "", Err(e));
        return (o.status, keel_platform::http::Json(without_path(o.body))).into_response();
    }
    let raw = if method == Method::GET {
        query.get("input").map(|s| s.as_bytes().to_vec())
    } else {
        Some(body.to_vec())
    };
    let cookies = Arc::new(Mutex::new(Vec::new()));
    let ctx = Ctx {
        state: state.clone(),
        owner: owner.0,
        peer: owner.1,
        cookies: cookies.clone(),
    };
    let cross_site = !same_origin(&state.cfg, &headers);
    let outcomes = match inputs(&state, batch, names.len(), raw.as_deref()) {
        Err(e) => vec![answer(&state, &path, Err(e))],
        Ok(inputs) => {
            let calls = names.iter().zip(inputs).map(|(name, input)| {
                let (state, ctx, method) = (&state, ctx.clone(), &method);
                async move {
                    let out = match state.procedures.get(name) {
                        Some(p) => run(p, ctx, method, cross_site, input).await,
                        None => Err(trpc("NOT_FOUND", format!("No procedure {name}"))),
                    };
                    answer(state, name, out)
                }
            });
            futures::future::join_all(calls).await
        }
    };
    let retry_after = outcomes.iter().filter_map(|o| o.retry_after).max();
    let status = match outcomes.first() {
        Some(first) if outcomes.iter().all(|o| o.status == first.status) => first.status,
        Some(_) => StatusCode::MULTI_STATUS,
        None => StatusCode::OK,
    };
    let mut bodies = outcomes.into_iter().map(|o| o.body);
    let body = if batch {
        Value::Array(bodies.collect())
    } else {
        bodies.next().unwrap_or(Value::Null)
    };
    let mut resp = (status, keel_platform::http::Json(body)).into_response();
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(secs) = retry_after {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    for c in cookies
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .drain(..)
    {
        resp.headers_mut().append(header::SET_COOKIE, c);
    }
    resp
}
