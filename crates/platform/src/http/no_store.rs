//! An answer that carries a secret (tokens, a nonce, a password shown
//! once, a two-factor secret): `Cache-Control: no-store`, so neither a
//! shared cache nor the browser's disk keeps it.

use axum::http::HeaderValue;
use axum::http::header::CACHE_CONTROL;
use axum::response::{IntoResponse, Response};

/// `T`'s answer, never stored.
pub struct NoStore<T>(pub T);

impl<T: IntoResponse> IntoResponse for NoStore<T> {
    fn into_response(self) -> Response {
        let mut resp = self.0.into_response();
        resp.headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        resp
    }
}
