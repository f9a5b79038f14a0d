//! Traces over OTLP (http/protobuf), configured by the standard `OTEL_*`
//! variables and off unless an endpoint is set: the exporter, its queue
//! and the provider. When off, nothing here runs: no layer is installed,
//! no context is read from requests or written to outbound calls, no
//! statement span is made (`observe::trace::enabled` is the one check).

mod config;
mod export;

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider, SpanExporter as _};

pub use config::{OtelConfig, OtelConfigError, read};
pub use export::QUEUE;

// The names of the variables read here.
const OTEL_EXPORTER_OTLP_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

static INSTALLED: OnceLock<Installed> = OnceLock::new();

struct Installed {
    flusher: export::Flusher,
    _provider: SdkTracerProvider,
}

/// Builds the exporter, the provider and the export task (spawned on the
/// current runtime); the tracer for the subscriber's layer.
pub(crate) fn install(cfg: OtelConfig) -> Result<SdkTracer, OtelConfigError> {
    if !cfg!(feature = "traces") {
        return Err(OtelConfigError {
            var: OTEL_EXPORTER_OTLP_ENDPOINT,
            problem: "this keel was built without traces (feature `traces`)".to_owned(),
        });
    }
    let client = export::Reqwest::new(cfg.timeout).map_err(|e| OtelConfigError {
        var: OTEL_EXPORTER_OTLP_ENDPOINT,
        problem: format!("the exporter's HTTP client could not be built: {e}"),
    })?;
    let resource = Resource::builder_empty()
        .with_service_name(cfg.service_name)
        .with_attributes(cfg.resource)
        .with_attributes([
            opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
            // One process among the nodes of a deployment.
            opentelemetry::KeyValue::new("service.instance.id", uuid::Uuid::new_v4().to_string()),
        ])
        .build();
    // Every setting given here: the exporter reads no variable itself.
    let compression = cfg.gzip.then_some(opentelemetry_otlp::Compression::Gzip);
    let mut builder = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(cfg.endpoint)
        .with_timeout(cfg.timeout)
        .with_headers(cfg.headers)
        .with_http_client(client);
    if let Some(c) = compression {
        builder = builder.with_compression(c);
    }
    let mut exporter = builder.build().map_err(|e| OtelConfigError {
        var: OTEL_EXPORTER_OTLP_ENDPOINT,
        problem: e.to_string(),
    })?;
    // The SDK's processors pass the resource on to their exporter; here
    // the exporter is told before the export task takes it.
    exporter.set_resource(&resource);
    let (queue, flusher, task) = export::queue(exporter, cfg.timeout);
    let provider = SdkTracerProvider::builder()
        .with_span_processor(queue)
        .with_sampler(cfg.sampler)
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("keel");
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| OtelConfigError {
        var: OTEL_EXPORTER_OTLP_ENDPOINT,
        problem: "traces are exported from the server's runtime, and none is running".to_owned(),
    })?;
    runtime.spawn(task);
    let installed = Installed {
        flusher,
        _provider: provider,
    };
    if INSTALLED.set(installed).is_ok() {
        crate::observe::trace::turn_on(tracer.clone());
    }
    Ok(tracer)
}

/// Sends the spans ended so far to the collector, waiting at most
/// `within`; nothing when traces are off. The server calls it last on
/// SIGTERM.
pub async fn flush(within: Duration) {
    if let Some(i) = INSTALLED.get() {
        i.flusher.flush(within).await;
    }
}
