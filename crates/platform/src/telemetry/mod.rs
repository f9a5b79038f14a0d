//! Logs (tracing) and metrics (Prometheus). Metrics are served on their own
//! listener (`KEEL_METRICS_ADDR`), never next to the APIs.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use futures::future::BoxFuture;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use tokio_util::sync::CancellationToken;

use crate::config::{LogFormat, Source};

mod logs;
pub mod otel;
pub mod traffic;

/// The filter without `RUST_LOG`. The passkey library logs a client's
/// refused answer (and an ordinary passkey's zero counter) at error level;
/// keel logs each refusal itself, with its reason, so the library's own
/// lines are off unless asked for.
const DEFAULT_FILTER: &str = "info,webauthn_rs_core=off";

/// Installs the global subscriber: `RUST_LOG` filter (default
/// [`DEFAULT_FILTER`]), human-readable on a terminal, JSON when asked (with
/// the trace and span ids when traces are on), and the OpenTelemetry layer
/// when the `OTEL_*` variables ask for traces ([`otel`]). Idempotent. A bad
/// `OTEL_*` value is an error naming the variable.
pub fn init_tracing(src: &Source, format: LogFormat) -> Result<(), otel::OtelConfigError> {
    let traces = match otel::read(|k| src.get(k).map(str::to_owned))? {
        Some(cfg) if !crate::observe::trace::enabled() => Some(otel::install(cfg)?),
        _ => None,
    };
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let traces = traces.map(|tracer| {
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_tracked_inactivity(false)
            .with_threads(false)
            .with_location(false)
            .with_level(false)
            .with_target(false)
    });
    let registry = tracing_subscriber::registry().with(filter).with(traces);
    let result = match format {
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .map_event_format(logs::WithTraceIds)
                    .with_writer(std::io::stderr),
            )
            .try_init(),
        LogFormat::Text => registry
            .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
            .try_init(),
    };
    // Already installed (a test harness, a second launch): keep that one.
    let _ = result;
    Ok(())
}

static PROMETHEUS: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The process-wide Prometheus recorder (installed on first use).
pub fn prometheus() -> Option<PrometheusHandle> {
    PROMETHEUS
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Suffix("duration_seconds".to_owned()),
                    LATENCY_BUCKETS,
                )
                .ok()?;
            match builder.install_recorder() {
                Ok(handle) => Some(handle),
                Err(e) => {
                    tracing::warn!(error = %e, "metrics recorder not installed");
                    None
                }
            }
        })
        .clone()
}

/// How often [`upkeep`] runs.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Keeps the recorder's memory bounded until `stop`. The recorder keeps
/// every histogram sample (one a request) until upkeep folds them into
/// their buckets; without it memory grew by about 20 bytes a request for
/// as long as nobody scraped /metrics (the benchmark saw 30 -> 90 MiB in a
/// minute of /healthz). Scrapes fold them too; this bounds the rest.
pub async fn upkeep(stop: CancellationToken) {
    let Some(handle) = prometheus() else {
        return;
    };
    let mut every = tokio::time::interval(UPKEEP_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = every.tick() => handle.run_upkeep(),
        }
    }
}

/// What a scrape reads before it renders: gauges of state kept elsewhere
/// (the job queue in the database, the pools, readiness), set fresh.
pub type Sampler = Arc<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// The longest a scrape waits for its [`Sampler`]; past it, the gauges
/// keep their last values and the scrape answers anyway.
const SAMPLE_WITHIN: Duration = Duration::from_secs(2);

/// The metrics listener's router: `GET /metrics`, after `sample` (if any).
pub fn metrics_router(sample: Option<Sampler>) -> Router {
    let handle = prometheus();
    Router::new().route(
        "/metrics",
        get(move || {
            let handle = handle.clone();
            let sample = sample.clone();
            async move {
                if let Some(sample) = sample
                    && tokio::time::timeout(SAMPLE_WITHIN, sample()).await.is_err()
                {
                    metrics::counter!("keel_metrics_sample_timeouts_total").increment(1);
                }
                (
                    [(http::header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                    handle.map(|h| h.render()).unwrap_or_default(),
                )
            }
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn upkeep_runs_until_the_server_stops() {
        let stop = CancellationToken::new();
        let task = tokio::spawn(upkeep(stop.clone()));
        metrics::histogram!("keel_test_duration_seconds").record(0.001);
        tokio::task::yield_now().await;
        assert!(!task.is_finished());
        stop.cancel();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("upkeep stops when told")
            .expect("upkeep does not panic");
    }
}
