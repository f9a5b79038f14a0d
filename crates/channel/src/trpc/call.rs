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

/// One call's outcome: its status and its envelope.
fn answer(state: &AppState, name: &str, out: Result<Value, Error>) -> (StatusCode, Value) {
    match out {
        Ok(data) => (
            StatusCode::OK,
            json!({"result": {"data": state.wrap(data)}}),
        ),
        Err(e) => {
            let ClientError {
                status,
                code,
                message,
                mut data,
            } = e.into_client();
            data.insert("path".to_owned(), Value::from(name));
            (status, Trpc::body(status, code, &message, &data))
        }
    }
}

/// A failure before any call ran (the body could not be read).
fn answer_error(state: &AppState, path: &str, e: Error) -> Response {
    let (status, body) = answer(state, path, Err(e));
    (status, keel_platform::http::Json(body)).into_response()
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
    let (status, body) = if batch && outcomes.len() > 1 {
        let first = outcomes[0].0;
        let status = if outcomes.iter().all(|(s, _)| *s == first) {
            first
        } else {
            StatusCode::MULTI_STATUS
        };
        (
            status,
            Value::Array(outcomes.into_iter().map(|(_, b)| b).collect()),
        )
    } else if batch {
        let (s, b) = outcomes
            .into_iter()
            .next()
            .unwrap_or((StatusCode::OK, Value::Null));
        (s, Value::Array(vec![b]))
    } else {
        outcomes
            .into_iter()
            .next()
            .unwrap_or((StatusCode::OK, Value::Null))
    };
    let mut resp = (status, keel_platform::http::Json(body)).into_response();
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    for c in cookies
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .drain(..)
    {
        resp.headers_mut().append(header::SET_COOKIE, c);
    }
    resp
}
