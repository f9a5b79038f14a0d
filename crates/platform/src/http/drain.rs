//! Request bodies left unread when the answer is ready (a 404, a refusal
//! before the upload ended, a limit reached) are read to their end and
//! dropped before the answer goes, within a cap. A client still sending
//! then gets the answer; otherwise closing the connection with its data
//! unread resets it, and the client sees a reset instead of the answer.
//! Past the cap (or the time allowed) the connection is closed
//! (`Connection: close`) rather than read any further.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::HeaderValue;
use axum::http::header::CONNECTION;
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt;
use http_body::{Body as _, Frame, SizeHint};

/// At most this much is read past what the handler read.
const CAP: usize = 16 * 1024 * 1024;
/// For at most this long.
const TIME: Duration = Duration::from_secs(10);

/// The request body, shared between the handler and this layer.
struct Shared(Arc<Mutex<Body>>);

fn lock(m: &Mutex<Body>) -> std::sync::MutexGuard<'_, Body> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl http_body::Body for Shared {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut *lock(&self.0)).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        lock(&self.0).is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        lock(&self.0).size_hint()
    }
}

/// Reads what is left of `body`: whether it ended within the cap and time.
async fn read_rest(body: Body) -> bool {
    let rest = async {
        let mut seen = 0usize;
        let mut data = body.into_data_stream();
        while let Some(chunk) = data.next().await {
            let Ok(chunk) = chunk else { return false };
            seen = seen.saturating_add(chunk.len());
            if seen > CAP {
                return false;
            }
        }
        true
    };
    tokio::time::timeout(TIME, rest).await.unwrap_or(false)
}

pub async fn drain_unread(req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    if body.is_end_stream() {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let shared = Arc::new(Mutex::new(body));
    let mut resp = next
        .run(Request::from_parts(
            parts,
            Body::new(Shared(shared.clone())),
        ))
        .await;
    // Only when nothing else holds the body (a streamed answer may still
    // be reading it).
    let Some(rest) = Arc::into_inner(shared) else {
        return resp;
    };
    let rest = rest.into_inner().unwrap_or_else(PoisonError::into_inner);
    if !rest.is_end_stream() && !read_rest(rest).await {
        resp.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}
