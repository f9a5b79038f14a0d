//! A panic while a response body is being produced (a streamed export, say)
//! happens after the handler returned, out of reach of the panic → 500
//! layer: the headers are gone already. It must not pass silently: this
//! layer catches it, counts it (`keel_http_body_panics_total`), logs it
//! with the request id, and ends the body with an error so the client sees
//! an aborted response instead of a short one that looks complete.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use http_body::{Frame, SizeHint};

use super::layers::REQUEST_ID;
use crate::failure::panic_text;

/// Wraps every response body of the service in a [`Guarded`] body.
pub async fn guard_bodies(
    State(service): State<&'static str>,
    req: Request,
    next: Next,
) -> Response {
    let request_id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    next.run(req).await.map(|inner| {
        Body::new(Guarded {
            inner,
            service,
            request_id,
            failed: false,
        })
    })
}

/// A body that turns a panic of the body it wraps into an error frame.
pub struct Guarded {
    inner: Body,
    service: &'static str,
    request_id: String,
    failed: bool,
}

/// The error a guarded body ends with after its inner body panicked.
#[derive(Debug, thiserror::Error)]
#[error("the response body panicked")]
pub struct BodyPanicked;

impl http_body::Body for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if self.failed {
            return Poll::Ready(None);
        }
        let this = &mut *self;
        let polled = catch_unwind(AssertUnwindSafe(|| {
            Pin::new(&mut this.inner).poll_frame(cx)
        }));
        match polled {
            Ok(p) => p,
            Err(panic) => {
                this.failed = true;
                let what = panic_text(panic.as_ref());
                metrics::counter!("keel_http_body_panics_total", "service" => this.service)
                    .increment(1);
                tracing::error!(
                    service = this.service,
                    request_id = %this.request_id,
                    panic = %what,
                    "a response body panicked; the response was cut off"
                );
                Poll::Ready(Some(Err(axum::Error::new(BodyPanicked))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.failed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A streamed body that is safe to poll after its end (some layers, e.g.
/// compression, look for trailers after the data ended; many streams, e.g.
/// `futures::stream::unfold`, panic when polled again).
pub fn stream_body<S>(chunks: S) -> Body
where
    S: futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
{
    use futures::StreamExt;
    Body::from_stream(chunks.fuse())
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
        type Writer = Self;

        fn make_writer(&'a self) -> Self {
            self.clone()
        }
    }

    #[tokio::test]
    async fn a_body_that_panics_ends_in_an_error_logged_with_the_request_id() {
        let logs = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(logs.clone())
            .with_ansi(false)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let chunks = futures::stream::once(async {
            if true {
                panic!("export page 3 blew up");
            }
            Ok(Bytes::new())
        });
        let body = Body::new(Guarded {
            inner: stream_body(chunks),
            service: "svc",
            request_id: "req-42".to_owned(),
            failed: false,
        });
        assert!(axum::body::to_bytes(body, usize::MAX).await.is_err());
        let text = String::from_utf8(logs.0.lock().map(|l| l.clone()).unwrap_or_default())
            .unwrap_or_default();
        assert!(text.contains("req-42"), "{text}");
        assert!(text.contains("export page 3 blew up"), "{text}");
        assert!(text.contains("ERROR"), "{text}");
    }
}
