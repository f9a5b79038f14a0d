//! CORS for the public routes, from the `allowed_origins` setting: headers
//! only for a listed origin; none at all when the setting is blank.

use axum::extract::{Request, State};
use axum::http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_MAX_AGE, ORIGIN, VARY,
};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

use crate::state::AppState;

/// The allowed origin of this request, if any.
pub async fn allowed_origin(state: &AppState, headers: &HeaderMap) -> Option<HeaderValue> {
    let origin = headers.get(ORIGIN)?;
    let settings = state.settings.get().await.ok()?;
    let text = origin.to_str().ok()?;
    settings
        .allowed_origins
        .iter()
        .any(|o| o == text)
        .then(|| origin.clone())
}

/// Adds `Access-Control-Allow-Origin` to answers for allowed origins.
pub async fn layer(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let origin = allowed_origin(&state, req.headers()).await;
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.append(VARY, HeaderValue::from_static("Origin"));
    if let Some(o) = origin {
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, o);
    }
    resp
}

/// The preflight headers for an allowed origin.
pub fn preflight(headers: &mut HeaderMap, methods: &'static str) {
    headers.insert(
        ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(methods),
    );
    headers.insert(
        ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Content-Type, X-Vendor-AppCheck"),
    );
    headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
}
