//! One HTTP request to `/api/trpc/<procedures>`: its calls, run, and their
//! answers in tRPC's envelopes.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, Query};
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::response::Response;
use axum::routing::{MethodRouter, any};
use keel_platform::observe::trace as spans;
use serde_json::{Map, Value};
use tracing::Instrument;

use super::error::{self, Error};
use super::{Access, Context, Kind, Procedure, Procedures, Settings, wire};

keel_platform::bytes_extractor!(
    /// A request's body as sent (within the route's limit).
    RawBody,
    Error
);

/// Runs one call of `p`, in a span named by the procedure when traces are
/// on.
async fn run<C: Context>(
    p: &Procedure<C>,
    ctx: C,
    method: &Method,
    input: Value,
) -> Result<Value, Error> {
    let span = spans::procedure("trpc", p.name);
    let answer = call(p, ctx, method, input).instrument(span.clone()).await;
    if answer.is_err() {
        spans::failed(&span);
    }
    answer
}

async fn call<C: Context>(
    p: &Procedure<C>,
    ctx: C,
    method: &Method,
    input: Value,
) -> Result<Value, Error> {
    let wanted = match p.kind {
        Kind::Query => Method::GET,
        Kind::Mutation => Method::POST,
    };
    if *method != wanted {
        return Err(error::wrong_method(Some((p.name, p.kind))));
    }
    if p.access != Access::Public {
        ctx.authorize(p.access)?;
    }
    if p.kind == Kind::Mutation {
        ctx.may_mutate()?;
    }
    p.call(ctx, input).await
}

/// The methods a request for `names` may use: the one its procedures
/// take when they are all known and of one kind (a query also answers
/// HEAD), else GET and POST.
fn allowed<C: Send + 'static>(procedures: &Procedures<C>, names: &[String]) -> &'static [Method] {
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
fn method_refused<C: Send + 'static>(
    settings: Settings,
    procedures: &Procedures<C>,
    names: &[String],
    batch: bool,
    jsonl: bool,
    allow: &[Method],
) -> Response {
    let outcomes = names.iter().map(|n| {
        let p = procedures.get(n).map(|p| (p.name, p.kind));
        wire::Outcome::of(n, Err(error::wrong_method(p)))
    });
    let mut resp = if jsonl && batch {
        let ready = outcomes.enumerate().map(std::future::ready).collect();
        wire::jsonl(settings, ready, Vec::new())
    } else {
        wire::json(settings, batch, outcomes.collect(), Vec::new())
    };
    let list: Vec<&str> = allow.iter().map(Method::as_str).collect();
    if let Ok(v) = HeaderValue::from_str(&list.join(", ")) {
        resp.headers_mut().insert(axum::http::header::ALLOW, v);
    }
    resp
}

/// The calls' inputs: one per procedure, by position in a batch.
fn inputs(
    settings: Settings,
    batch: bool,
    n: usize,
    raw: Option<&[u8]>,
) -> Result<Vec<Value>, Error> {
    let parsed: Value = match raw {
        None => Value::Null,
        Some(b) if b.iter().all(u8::is_ascii_whitespace) => Value::Null,
        Some(b) => serde_json::from_slice(b).map_err(|e| error::not_json(&e))?,
    };
    keel_platform::http::input::refuse_nul(&parsed)
        .map_err(|e| error::error(super::TrpcCode::BadRequest, e.message()))?;
    let decode = |v| settings.transformer.decode(v);
    if !batch {
        return Ok(vec![decode(parsed)]);
    }
    let mut by_index = match parsed {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        _ => return Err(error::batch_input()),
    };
    Ok((0..n)
        .map(|i| decode(by_index.remove(&i.to_string()).unwrap_or(Value::Null)))
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
/// (a method they do not take is a 405 with `Allow`), each call run with
/// the context `C` the request gives.
pub fn route<S, C>(procedures: Arc<Procedures<C>>, settings: Settings) -> MethodRouter<S>
where
    S: Clone + Send + Sync + 'static,
    C: Context + FromRequestParts<S, Rejection = Error>,
{
    let handler = move |Path(path): Path<String>,
                        Query(query): Query<HashMap<String, String>>,
                        method: Method,
                        headers: HeaderMap,
                        ctx: Result<C, Error>,
                        body: Result<RawBody, Error>| {
        let request = Request {
            path,
            query,
            method,
            headers,
        };
        // The handler's own future, not one wrapping it: axum boxes it,
        // and a wrapper would double what is moved and dropped per request.
        handle(procedures.clone(), settings, request, ctx, body)
    };
    any(handler)
}

/// What a tRPC request asks, besides its body.
struct Request {
    path: String,
    query: HashMap<String, String>,
    method: Method,
    headers: HeaderMap,
}

async fn handle<C: Context>(
    procedures: Arc<Procedures<C>>,
    settings: Settings,
    request: Request,
    ctx: Result<C, Error>,
    body: Result<RawBody, Error>,
) -> Response {
    let Request {
        path,
        query,
        method,
        headers,
    } = request;
    let (ctx, body) = match (ctx, body) {
        (Ok(ctx), Ok(RawBody(b))) => (ctx, b),
        (Err(e), _) | (_, Err(e)) => return wire::request_error(settings, e),
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
        return method_refused(settings, &procedures, &names, batch, jsonl, allow);
    }
    // HEAD is a query's GET without its body (hyper drops the body).
    let method = if method == Method::HEAD {
        Method::GET
    } else {
        method
    };
    if names.len() > settings.max_batch {
        return wire::request_error(settings, error::batch_too_large());
    }
    if jsonl && !batch {
        return wire::request_error(settings, error::stream_not_batched());
    }
    let raw = if method == Method::GET {
        query.get("input").map(|s| s.as_bytes().to_vec())
    } else {
        Some(body.to_vec())
    };
    let cookies = ctx.cookies().clone();
    // Unreadable input fails every call of the request.
    let inputs = inputs(settings, batch, names.len(), raw.as_deref());
    let calls: Vec<_> = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let input = match &inputs {
                Ok(all) => Ok(all.get(i).cloned().unwrap_or(Value::Null)),
                Err(e) => Err(error::error(
                    e.code()
                        .and_then(super::TrpcCode::from_key)
                        .unwrap_or(super::TrpcCode::ParseError),
                    e.message(),
                )),
            };
            let (procedures, ctx, method) = (procedures.clone(), ctx.clone(), method.clone());
            async move {
                let out = match (input, procedures.get(&name)) {
                    (Err(e), _) => Err(e),
                    (Ok(input), Some(p)) => run(p, ctx, &method, input).await,
                    (Ok(_), None) => Err(error::no_procedure(&name)),
                };
                (i, wire::Outcome::of(&name, out))
            }
        })
        .collect();
    if jsonl && method == Method::GET {
        return wire::jsonl(settings, calls, cookies.take());
    }
    let mut outcomes = futures::future::join_all(calls).await;
    outcomes.sort_by_key(|(i, _)| *i);
    if jsonl {
        // Mutations finish before the head goes out, so the cookies they
        // set (a sign-in) are in its headers.
        let done = outcomes.into_iter().map(std::future::ready).collect();
        return wire::jsonl(settings, done, cookies.take());
    }
    let outcomes = outcomes.into_iter().map(|(_, o)| o).collect();
    wire::json(settings, batch, outcomes, cookies.take())
}
