//! One HTTP request to `/api/trpc/<procedures>`: its calls, run, and their
//! answers in tRPC's envelopes.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::response::Response;
use axum::routing::{MethodRouter, any};
use serde_json::{Map, Value};

use super::{Access, Kind, Procedure, Procedures, wire};
use crate::auth::{MaybeOwner, same_origin};
use crate::domain::owner::Owner;
use crate::error::{Error, trpc};
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
        return Err(wrong_method(Some(p)));
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

/// METHOD_NOT_SUPPORTED, saying which method `p` takes.
fn wrong_method(p: Option<&Procedure>) -> Error {
    match p {
        Some(p) if p.kind == Kind::Query => trpc(
            "METHOD_NOT_SUPPORTED",
            format!("{} is a query: use GET", p.name),
        ),
        Some(p) => trpc(
            "METHOD_NOT_SUPPORTED",
            format!("{} is a mutation: use POST", p.name),
        ),
        None => trpc(
            "METHOD_NOT_SUPPORTED",
            "This method is not allowed on this path",
        ),
    }
}

/// The methods a request for `names` may use: the one its procedures
/// take when they are all known and of one kind (a query also answers
/// HEAD), else GET and POST.
fn allowed(procedures: &Procedures, names: &[String]) -> &'static [Method] {
    const QUERY: &[Method] = &[Method::GET, Method::HEAD];
    const MUTATION: &[Method] = &[Method::POST];
    const EITHER: &[Method] = &[Method::GET, Method::HEAD, Method::POST];
    let kinds: Option<Vec<Kind>> = names
        .iter()
        .map(|n| procedures.get(n).map(|p| p.kind))
        .collect();
    match kinds.as_deref() {
        Some([first, rest @ ..]) if rest.iter().all(|k| k == first) => match first {
            Kind::Query => QUERY,
            Kind::Mutation => MUTATION,
        },
        _ => EITHER,
    }
}

/// A request by a method its procedures do not take: 405 for each call
/// (in the JSONL stream when that was asked for), with `Allow` naming the
/// methods they do.
fn method_refused(
    state: &AppState,
    procedures: &Procedures,
    names: &[String],
    (batch, jsonl): (bool, bool),
    allow: &[Method],
) -> Response {
    let outcomes = names
        .iter()
        .map(|n| wire::Outcome::of(n, Err(wrong_method(procedures.get(n)))));
    let no_cookies = Mutex::new(Vec::new());
    let mut resp = if jsonl && batch {
        let ready = outcomes.enumerate().map(std::future::ready).collect();
        wire::jsonl(state, ready, &no_cookies)
    } else {
        wire::json(state, batch, outcomes.collect(), &no_cookies)
    };
    let list: Vec<&str> = allow.iter().map(Method::as_str).collect();
    if let Ok(v) = HeaderValue::from_str(&list.join(", ")) {
        resp.headers_mut().insert(axum::http::header::ALLOW, v);
    }
    resp
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
    keel_platform::http::input::refuse_nul(&parsed)
        .map_err(|e| trpc("BAD_REQUEST", e.message()))?;
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

/// Whether the client asked for the JSONL stream (`httpBatchStreamLink`).
fn wants_jsonl(headers: &HeaderMap) -> bool {
    headers
        .get("trpc-accept")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/jsonl"))
}

/// `/api/trpc/{procedures}` by any method, answering from `procedures`
/// (a method they do not take is a 405 with `Allow`).
pub fn route(procedures: Arc<Procedures>) -> MethodRouter<AppState> {
    let handler = move |state: State<AppState>,
                        Path(path): Path<String>,
                        Query(query): Query<HashMap<String, String>>,
                        method: Method,
                        owner: MaybeOwner,
                        headers: HeaderMap,
                        body: Result<RawBody, Error>| {
        let request = Request {
            path,
            query,
            method,
            owner,
            headers,
        };
        // The handler's own future, not one wrapping it: axum boxes it,
        // and a wrapper would double what is moved and dropped per request.
        handle(procedures.clone(), state, request, body)
    };
    any(handler)
}

/// What a tRPC request asks, besides its body.
struct Request {
    path: String,
    query: HashMap<String, String>,
    method: Method,
    owner: MaybeOwner,
    headers: HeaderMap,
}

async fn handle(
    procedures: Arc<Procedures>,
    State(state): State<AppState>,
    request: Request,
    body: Result<RawBody, Error>,
) -> Response {
    let Request {
        path,
        query,
        method,
        owner,
        headers,
    } = request;
    let body = match body {
        Ok(RawBody(b)) => b,
        Err(e) => return wire::request_error(&state, e),
    };
    let batch = query.get("batch").is_some_and(|b| b == "1");
    let names: Vec<String> = if batch {
        path.split(',').map(str::to_owned).collect()
    } else {
        vec![path.clone()]
    };
    let jsonl = wants_jsonl(&headers);
    let allow = allowed(&procedures, &names);
    if !allow.contains(&method) {
        return method_refused(&state, &procedures, &names, (batch, jsonl), allow);
    }
    // HEAD is a query's GET without its body (hyper drops the body).
    let method = if method == Method::HEAD {
        Method::GET
    } else {
        method
    };
    if names.len() > state.cfg.max_batch {
        // As @trpc/server's `maxBatchSize`: the whole request, no path.
        return wire::request_error(
            &state,
            trpc("BAD_REQUEST", "Batch call exceeds maximum size"),
        );
    }
    if jsonl && !batch {
        return wire::request_error(
            &state,
            trpc(
                "BAD_REQUEST",
                "Streaming requests must be batched (you can do a batch of 1)",
            ),
        );
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
    // Unreadable input fails every call of the request.
    let inputs = inputs(&state, batch, names.len(), raw.as_deref());
    let calls: Vec<_> = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let input = match &inputs {
                Ok(all) => Ok(all.get(i).cloned().unwrap_or(Value::Null)),
                Err(e) => Err(trpc(e.code().unwrap_or("PARSE_ERROR"), e.message())),
            };
            let (procedures, ctx, method) = (procedures.clone(), ctx.clone(), method.clone());
            async move {
                let out = match (input, procedures.get(&name)) {
                    (Err(e), _) => Err(e),
                    (Ok(input), Some(p)) => run(p, ctx, &method, cross_site, input).await,
                    (Ok(_), None) => Err(trpc("NOT_FOUND", format!("No procedure {name}"))),
                };
                (i, wire::Outcome::of(&name, out))
            }
        })
        .collect();
    if jsonl && method == Method::GET {
        return wire::jsonl(&state, calls, &cookies);
    }
    let mut outcomes = futures::future::join_all(calls).await;
    outcomes.sort_by_key(|(i, _)| *i);
    if jsonl {
        // Mutations finish before the head goes out, so the cookies they
        // set (a sign-in by setup.complete) are in its headers.
        let done = outcomes.into_iter().map(std::future::ready).collect();
        return wire::jsonl(&state, done, &cookies);
    }
    let outcomes = outcomes.into_iter().map(|(_, o)| o).collect();
    wire::json(&state, batch, outcomes, &cookies)
}
