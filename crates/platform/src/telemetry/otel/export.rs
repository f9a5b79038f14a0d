//! From an ended span to the collector, without ever making a request wait.
//!
//! The SDK's exporter, its resource and its sampler are used as they are,
//! given their settings explicitly (`config`). Its batch processor is not,
//! for two reasons written down in docs/operations.md ("Observing keel"):
//! it counts the spans it drops in a private field that only a log line at
//! shutdown reports, where an operator needs a metric; and it exports from
//! a thread of its own through a blocking executor, outside the server's
//! tasks, so its last batch is not drained with the rest on SIGTERM. What replaces it is small: ending a
//! span is a `try_send` into a bounded queue (full: the span is dropped and
//! `keel_trace_spans_dropped_total` counts it); one task sends batches of up
//! to [`BATCH`] spans through the OTLP exporter, at most [`EVERY`] apart, and
//! each export may take at most `OTEL_EXPORTER_OTLP_TIMEOUT`. A collector that is
//! down or slow fills the queue, never a request's time.

use std::time::Duration;

use bytes::Bytes;
use opentelemetry::Context;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use tokio::sync::{mpsc, oneshot};

/// Spans waiting for export, at most.
pub const QUEUE: usize = 4096;
/// Spans in one export, at most.
const BATCH: usize = 512;
/// The longest a span waits in the queue when fewer than [`BATCH`] wait.
const EVERY: Duration = Duration::from_secs(1);

enum Msg {
    Span(Box<SpanData>),
    Flush(oneshot::Sender<()>),
}

/// The span processor: ended spans into the bounded queue.
#[derive(Debug)]
pub struct Queue {
    tx: mpsc::Sender<Msg>,
}

/// Asks the export task to send what it holds, and answers when it has.
#[derive(Debug)]
pub struct Flusher {
    tx: mpsc::Sender<Msg>,
}

/// The span processor, its flusher, and the export task to spawn; each
/// export may take at most `within` (`OTEL_EXPORTER_OTLP_TIMEOUT`).
pub fn queue<E: SpanExporter + 'static>(
    exporter: E,
    within: Duration,
) -> (Queue, Flusher, impl Future<Output = ()> + Send) {
    let (tx, rx) = mpsc::channel(QUEUE);
    (
        Queue { tx: tx.clone() },
        Flusher { tx },
        run(rx, exporter, within),
    )
}

impl SpanProcessor for Queue {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        if self.tx.try_send(Msg::Span(Box::new(span))).is_err() {
            metrics::counter!("keel_trace_spans_dropped_total").increment(1);
        }
    }

    /// Asks the export task to send what it holds now, without waiting
    /// for it: the SDK calls this synchronously, perhaps on a runtime
    /// thread, where blocking could stall every request. The server waits
    /// for the export itself on SIGTERM ([`Flusher::flush`], async).
    fn force_flush(&self) -> OTelSdkResult {
        let (done, _) = oneshot::channel();
        self.tx
            .try_send(Msg::Flush(done))
            .map_err(|e| OTelSdkError::InternalFailure(format!("the export queue: {e}")))
    }

    /// As [`Self::force_flush`]: what was ended goes out; the task itself
    /// ends with the process.
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        self.force_flush()
    }
}

impl Flusher {
    /// Sends every span ended so far, waiting at most `within`.
    pub async fn flush(&self, within: Duration) {
        let (done, sent) = oneshot::channel();
        let asked = tokio::time::timeout(within, async {
            if self.tx.send(Msg::Flush(done)).await.is_ok() {
                let _ = sent.await;
            }
        })
        .await;
        if asked.is_err() {
            tracing::warn!("spans not all exported before the deadline");
        }
    }
}

async fn run<E: SpanExporter>(mut rx: mpsc::Receiver<Msg>, exporter: E, within: Duration) {
    let mut batch: Vec<SpanData> = Vec::with_capacity(BATCH);
    let mut every = tokio::time::interval(EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            msg = rx.recv() => match msg {
                None => return export(&exporter, &mut batch, within).await,
                Some(Msg::Span(span)) => {
                    batch.push(*span);
                    if batch.len() >= BATCH {
                        export(&exporter, &mut batch, within).await;
                    }
                }
                Some(Msg::Flush(done)) => {
                    while let Ok(Msg::Span(span)) = rx.try_recv() {
                        batch.push(*span);
                        if batch.len() >= BATCH {
                            export(&exporter, &mut batch, within).await;
                        }
                    }
                    export(&exporter, &mut batch, within).await;
                    let _ = done.send(());
                }
            },
            _ = every.tick() => export(&exporter, &mut batch, within).await,
        }
    }
}

async fn export<E: SpanExporter>(exporter: &E, batch: &mut Vec<SpanData>, within: Duration) {
    if batch.is_empty() {
        return;
    }
    let n = batch.len() as u64;
    let spans = std::mem::replace(batch, Vec::with_capacity(BATCH));
    let outcome = match tokio::time::timeout(within, exporter.export(spans)).await {
        Ok(Ok(())) => "ok",
        Ok(Err(e)) => {
            tracing::debug!(error = %e, spans = n, "exporting spans failed");
            "failed"
        }
        Err(_) => "timeout",
    };
    metrics::counter!("keel_trace_spans_exported_total", "outcome" => outcome).increment(n);
}

/// The exporter's HTTP client: keel's own reqwest (rustls on AWS-LC), so
/// no second HTTP stack is built in. Its timeout bounds each export.
#[derive(Debug)]
pub struct Reqwest(pub reqwest::Client);

impl Reqwest {
    pub fn new(within: Duration) -> Result<Self, reqwest::Error> {
        crate::crypto::install_crypto_provider();
        reqwest::Client::builder()
            .timeout(within)
            .connect_timeout(Duration::from_secs(2))
            .user_agent(concat!("keel/", env!("CARGO_PKG_VERSION")))
            .build()
            .map(Self)
    }
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Reqwest {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, opentelemetry_http::HttpError> {
        let request = reqwest::Request::try_from(request.map(reqwest::Body::from))?;
        let resp = self.0.execute(request).await?;
        let mut answer = http::Response::builder().status(resp.status());
        if let Some(headers) = answer.headers_mut() {
            *headers = resp.headers().clone();
        }
        Ok(answer.body(resp.bytes().await?)?)
    }
}
