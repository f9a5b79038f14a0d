//! The fake's server-side API: get-or-create, get, go-live and stop-live of
//! a call, get-or-create of a chat channel, and user upserts, each checked
//! as GetStream checks it (`api_key`, a server JWT with `Stream-Auth-Type:
//! jwt`, and a `created_by_id` that names an existing user) and recorded
//! with its query, auth and body, so a test can compare what keel sends
//! with what GetStream's own server SDK sends.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};

use super::{API_KEY, API_SECRET, Call, Inner, Recorded, lock};

pub(crate) fn error(status: StatusCode, code: i64, message: &str) -> Response {
    (
        status,
        axum::Json(json!({"code": code, "message": message, "StatusCode": status.as_u16()})),
    )
        .into_response()
}

/// A call to the server-side API: what [`check`] reads and records.
pub(super) struct ServerCall {
    method: Method,
    query: HashMap<String, String>,
    headers: HeaderMap,
    body: Bytes,
}

impl<S: Send + Sync> FromRequest<S> for ServerCall {
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Response> {
        let method = req.method().clone();
        let headers = req.headers().clone();
        let query = Query::<HashMap<String, String>>::try_from_uri(req.uri())
            .map_err(IntoResponse::into_response)?
            .0;
        let body = Bytes::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(Self {
            method,
            query,
            headers,
            body,
        })
    }
}

/// The auth every request needs; `Err` is the answer.
fn check(inner: &Inner, path: &str, call: &ServerCall) -> Result<Value, Box<Response>> {
    let ServerCall {
        method,
        query,
        headers,
        body,
    } = call;
    let scripted = {
        let mut by_path = lock(&inner.fail_paths);
        match by_path.iter().position(|(p, _)| path.contains(p.as_str())) {
            Some(i) => Some(by_path.remove(i).1),
            None => {
                let mut f = lock(&inner.fail);
                (!f.is_empty()).then(|| f.remove(0))
            }
        }
    };
    if let Some(status) = scripted {
        let s = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return Err(Box::new(error(s, 0, "scripted failure")));
    }
    if query.get("api_key").map(String::as_str) != Some(API_KEY) {
        return Err(Box::new(error(
            StatusCode::UNAUTHORIZED,
            2,
            "api_key not found",
        )));
    }
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let auth_type = headers
        .get("stream-auth-type")
        .and_then(|v| v.to_str().ok());
    let mut v = Validation::new(Algorithm::HS256);
    v.required_spec_claims.clear();
    v.validate_exp = false;
    let claims =
        jsonwebtoken::decode::<Value>(token, &DecodingKey::from_secret(API_SECRET.as_bytes()), &v);
    let server = claims.is_ok_and(|c| c.claims["server"] == true);
    if auth_type != Some("jwt") || !server {
        return Err(Box::new(error(
            StatusCode::UNAUTHORIZED,
            5,
            "a server token is required",
        )));
    }
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body).unwrap_or(Value::Null)
    };
    lock(&inner.recorded).push(Recorded {
        method: method.to_string(),
        path: path.to_owned(),
        query: query
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
        auth_type: auth_type.map(str::to_owned),
        server_token: server,
        client: headers
            .get("x-stream-client")
            .or_else(|| headers.get("user-agent"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        body: body.clone(),
    });
    Ok(body)
}

/// Waits as a stall scripted for `path` says.
pub(super) async fn stall(inner: &Inner, path: &str) {
    let hold = {
        let mut stalls = lock(&inner.stalls);
        stalls
            .iter()
            .position(|(p, _)| path.contains(p.as_str()))
            .map(|i| stalls.remove(i).1)
    };
    if let Some(hold) = hold {
        tokio::time::sleep(hold).await;
    }
}

fn call_json(inner: &Inner, kind: &str, id: &str, c: &Call) -> Value {
    let session = if c.live {
        let by_role = lock(&inner.by_role).clone();
        json!({"participants_count_by_role": by_role, "anonymous_participant_count": *lock(&inner.anonymous)})
    } else {
        Value::Null
    };
    json!({
        "cid": format!("{kind}:{id}"),
        "type": kind,
        "id": id,
        "backstage": c.backstage,
        "ingress": {"rtmp": {"address": format!("rtmps://ingress.fake-stream.test:443/{id}")}},
        "egress": {"hls": {"playlist_url": if c.live { format!("{}/hls/{id}/playlist.m3u8", inner.base) } else { String::new() }}},
        "session": session,
    })
}

pub(super) async fn call(
    State(inner): State<Arc<Inner>>,
    Path((kind, id)): Path<(String, String)>,
    req: ServerCall,
) -> Response {
    let path = format!("/api/v2/video/call/{kind}/{id}");
    if let Err(r) = admit_creation(&inner, &path, &req).await {
        return *r;
    }
    let cid = format!("{kind}:{id}");
    let mut calls = lock(&inner.calls);
    let c = if req.method == Method::POST {
        calls
            .entry(cid)
            .or_insert(Call {
                backstage: true,
                live: false,
            })
            .clone()
    } else {
        match calls.get(&cid) {
            Some(c) => c.clone(),
            None => return error(StatusCode::NOT_FOUND, 16, "Can't find call"),
        }
    };
    drop(calls);
    axum::Json(json!({"call": call_json(&inner, &kind, &id, &c)})).into_response()
}

pub(super) async fn call_action(
    State(inner): State<Arc<Inner>>,
    Path((kind, id, action)): Path<(String, String, String)>,
    req: ServerCall,
) -> Response {
    let path = format!("/api/v2/video/call/{kind}/{id}/{action}");
    stall(&inner, &path).await;
    if let Err(r) = check(&inner, &path, &req) {
        return *r;
    }
    let cid = format!("{kind}:{id}");
    let mut calls = lock(&inner.calls);
    let Some(c) = calls.get_mut(&cid) else {
        return error(StatusCode::NOT_FOUND, 16, "Can't find call");
    };
    match action.as_str() {
        "go_live" => {
            c.backstage = false;
            c.live = true;
        }
        "stop_live" => {
            c.backstage = true;
            c.live = false;
        }
        _ => return error(StatusCode::NOT_FOUND, 4, "unknown action"),
    }
    let c = c.clone();
    drop(calls);
    axum::Json(json!({"call": call_json(&inner, &kind, &id, &c), "duration": "1ms"}))
        .into_response()
}

pub(super) async fn chat_query(
    State(inner): State<Arc<Inner>>,
    Path((kind, id)): Path<(String, String)>,
    req: ServerCall,
) -> Response {
    let path = format!("/api/v2/chat/channels/{kind}/{id}/query");
    if let Err(r) = admit_creation(&inner, &path, &req).await {
        return *r;
    }
    let cid = format!("{kind}:{id}");
    let channel = lock(&inner.channels)
        .entry(cid.clone())
        .or_insert_with(|| json!({"cid": cid, "type": kind, "id": id}))
        .clone();
    axum::Json(json!({"channel": channel, "messages": [], "members": []})).into_response()
}

/// A live playlist whose one segment is missing: players keep waiting.
pub(super) async fn playlist() -> Response {
    (
        [("content-type", "application/vnd.apple.mpegurl")],
        "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:2.0,\nsegment0.ts\n",
    )
        .into_response()
}

/// A get-or-create call: stalled when scripted, authenticated, and refused
/// when its `created_by_id` names no user, as GetStream refuses it.
async fn admit_creation(inner: &Inner, path: &str, call: &ServerCall) -> Result<(), Box<Response>> {
    stall(inner, path).await;
    let body = check(inner, path, call)?;
    let Some(creator) = body["data"]["created_by_id"].as_str() else {
        return Ok(());
    };
    if lock(&inner.users).contains_key(creator) {
        return Ok(());
    }
    Err(Box::new(error(
        StatusCode::BAD_REQUEST,
        4,
        &format!(
            "The following users are involved in this operation but do not exist: [{creator}]"
        ),
    )))
}

/// `POST /api/v2/users`: creates or replaces the users given.
pub(super) async fn upsert_users(State(inner): State<Arc<Inner>>, req: ServerCall) -> Response {
    let path = "/api/v2/users";
    let req = match check(&inner, path, &req) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let Some(users) = req["users"].as_object() else {
        return error(StatusCode::BAD_REQUEST, 4, "users is required");
    };
    let mut known = lock(&inner.users);
    for (id, user) in users {
        known.insert(id.clone(), user.clone());
    }
    axum::Json(json!({"users": users, "duration": "1ms"})).into_response()
}
