//! Spans and trace context: whether traces are on (the one check, which
//! `telemetry::otel::install` turns on), the client spans of I/O calls,
//! context in and out (W3C `traceparent`/`tracestate`), links from a job to
//! its cause, statement spans, and the ids JSON logs carry. Each is a
//! no-op while traces are off.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_http::{HeaderExtractor, HeaderInjector};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::registry::LookupSpan;

use opentelemetry_sdk::trace::SdkTracer;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(false);
static TRACER: OnceLock<SdkTracer> = OnceLock::new();

/// Whether traces are being recorded (never in a build without the
/// `traces` feature, where this is a constant and the code it guards goes).
pub fn enabled() -> bool {
    cfg!(feature = "traces") && ENABLED.load(Ordering::Relaxed)
}

/// keel's tracer, when traces are on.
pub(crate) fn tracer() -> Option<&'static SdkTracer> {
    TRACER.get().filter(|_| enabled())
}

/// Turns traces on with `tracer` (once: a second call changes nothing).
pub(crate) fn turn_on(tracer: SdkTracer) {
    if TRACER.set(tracer).is_ok() {
        ENABLED.store(true, Ordering::Relaxed);
    }
}

/// The trace and span a log line was written in (hex), kept on the spans
/// keel opens for requests and jobs; JSON logs print them.
#[derive(Clone, Debug)]
pub struct TraceIds {
    pub trace_id: String,
    pub span_id: String,
}

/// Makes the request's `traceparent` (if any) the parent of `span`, and
/// notes the ids for logs.
pub fn adopt_parent(span: &tracing::Span, headers: &http::HeaderMap) {
    if !enabled() {
        return;
    }
    if headers.contains_key("traceparent") {
        let cx = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
        let _ = span.set_parent(cx);
    }
    note_ids(span);
}

/// Keeps `span`'s trace and span ids where the log formatter finds them.
pub fn note_ids(span: &tracing::Span) {
    if !enabled() {
        return;
    }
    let cx = span.context();
    let sc = cx.span().span_context().clone();
    if !sc.is_valid() {
        return;
    }
    let ids = TraceIds {
        trace_id: sc.trace_id().to_string(),
        span_id: sc.span_id().to_string(),
    };
    span.with_subscriber(|(id, dispatch)| {
        if let Some(registry) = dispatch.downcast_ref::<tracing_subscriber::Registry>()
            && let Some(s) = registry.span(id)
        {
            s.extensions_mut().insert(ids);
        }
    });
}

/// Writes the current span's context into an outbound request's headers.
pub fn inject(headers: &mut http::HeaderMap) {
    if !enabled() {
        return;
    }
    let cx = tracing::Span::current().context();
    TraceContextPropagator::new().inject_context(&cx, &mut HeaderInjector(headers));
}

/// The current span's `traceparent`, stored with a job it enqueues.
pub fn current_traceparent() -> Option<String> {
    if !enabled() {
        return None;
    }
    let cx = tracing::Span::current().context();
    if !cx.span().span_context().is_valid() {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&cx, &mut carrier);
    carrier.remove("traceparent")
}

/// Links `span` to the span a stored `traceparent` names (the request or
/// tick that enqueued a job): a link, not a parent, since a job runs
/// later, perhaps on another node, and may run more than once.
pub fn link(span: &tracing::Span, traceparent: Option<&str>) {
    let Some(tp) = traceparent.filter(|_| enabled()) else {
        return;
    };
    let carrier = HashMap::from([("traceparent".to_owned(), tp.to_owned())]);
    let cx = TraceContextPropagator::new().extract(&carrier);
    let sc = cx.span().span_context().clone();
    if sc.is_valid() {
        span.add_link(sc);
    }
}

/// A Redis command's client span (`GET`, `EVAL`, ...), or no span when
/// traces are off.
pub fn redis(operation: &str) -> tracing::Span {
    if !enabled() {
        return tracing::Span::none();
    }
    tracing::info_span!(
        "redis",
        otel.name = %operation,
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        db.system.name = "redis",
        db.operation.name = %operation,
    )
}

/// An outbound HTTP call's client span, named by its method as the HTTP
/// conventions say (the URL is never recorded: a provider's credential
/// often lives in it), or no span when traces are off.
pub fn outbound(method: &http::Method, url: &url::Url) -> tracing::Span {
    if !enabled() {
        return tracing::Span::none();
    }
    tracing::info_span!(
        "outbound",
        otel.name = %method,
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        http.request.method = %method,
        server.address = url.host_str().unwrap_or(""),
        server.port = i64::from(url.port_or_known_default().unwrap_or(0)),
        http.response.status_code = tracing::field::Empty,
    )
}

/// Handing a mail to the SMTP relay, or no span when traces are off.
pub fn smtp() -> tracing::Span {
    if !enabled() {
        return tracing::Span::none();
    }
    tracing::info_span!(
        "smtp",
        otel.name = "smtp send",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        network.protocol.name = "smtp",
    )
}

/// A unit of work of its own (a cron tick, quotebot's scheduled post for
/// a guild), or no span when traces are off.
pub fn work(name: &str) -> tracing::Span {
    if !enabled() {
        return tracing::Span::none();
    }
    let span = tracing::info_span!(
        "work",
        otel.name = %name,
        otel.kind = "internal",
        otel.status_code = tracing::field::Empty,
    );
    note_ids(&span);
    span
}

/// A call to a provider through its own client library (Discord's REST
/// API through twilight), or no span when traces are off.
pub fn provider_call(name: &'static str, peer: &'static str) -> tracing::Span {
    if !enabled() {
        return tracing::Span::none();
    }
    tracing::info_span!(
        "provider",
        otel.name = name,
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        peer.service = peer,
    )
}

/// One procedure of an RPC batch (tRPC), named by the procedure, or no
/// span when traces are off.
pub fn procedure(system: &'static str, name: &str) -> tracing::Span {
    if !enabled() {
        return tracing::Span::none();
    }
    tracing::info_span!(
        "procedure",
        otel.name = %name,
        otel.kind = "internal",
        otel.status_code = tracing::field::Empty,
        rpc.system = system,
        rpc.method = %name,
    )
}

/// Marks a client span failed.
pub fn failed(span: &tracing::Span) {
    span.record("otel.status_code", "ERROR");
}

/// A database statement that just ended after `elapsed`, as a client span
/// under the current span: named by operation and table, never with its
/// text or parameters. Statements outside any span (the job poller's) make
/// none.
pub fn statement(system: &'static str, sql: &str, elapsed: Duration, failed: bool) {
    if enabled() {
        let (operation, table) = describe(sql);
        record_statement(system, &operation, table, elapsed, failed);
    }
}

/// [`statement`], told its operation and table.
pub fn record_statement(
    system: &'static str,
    operation: &str,
    table: Option<String>,
    elapsed: Duration,
    failed: bool,
) {
    let Some(tracer) = tracer() else {
        return;
    };
    let parent: Context = tracing::Span::current().context();
    if !parent.span().span_context().is_valid() {
        return;
    }
    let operation = operation.to_owned();
    let end = SystemTime::now();
    let start = end.checked_sub(elapsed).unwrap_or(end);
    let mut attributes = vec![
        KeyValue::new("db.system.name", system),
        KeyValue::new("db.operation.name", operation.clone()),
    ];
    let name = match table {
        Some(t) => {
            let name = format!("{operation} {t}");
            attributes.push(KeyValue::new("db.collection.name", t));
            name
        }
        None => operation,
    };
    let mut span = tracer
        .span_builder(name)
        .with_kind(SpanKind::Client)
        .with_start_time(start)
        .with_attributes(attributes)
        .start_with_context(tracer, &parent);
    if failed {
        span.set_status(Status::error("the statement failed"));
    }
    span.end_with_timestamp(end);
}

/// The operation (first keyword) and the table a statement is about.
fn describe(sql: &str) -> (String, Option<String>) {
    let mut words = sql.split_whitespace();
    let operation = words.next().unwrap_or("SQL").to_ascii_uppercase();
    let after = match operation.as_str() {
        "SELECT" | "DELETE" => "FROM",
        "INSERT" => "INTO",
        "UPDATE" => "UPDATE",
        _ => return (operation, None),
    };
    let mut words = sql.split_whitespace();
    let table = if after == "UPDATE" {
        words.nth(1)
    } else {
        words
            .by_ref()
            .find(|w| w.eq_ignore_ascii_case(after))
            .and_then(|_| words.next())
    };
    let table = table
        .filter(|t| !t.starts_with('('))
        .map(|t| t.trim_matches(|c| matches!(c, '"' | '`' | '(' | ')' | ',' | ';')))
        .filter(|t| !t.is_empty())
        .map(|t| t.split('"').next().unwrap_or(t).to_owned());
    (operation, table)
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn a_statement_is_named_by_its_operation_and_table_never_its_values() {
        let cases = [
            (
                r#"SELECT "goals"."id" FROM "goals" WHERE "goals"."user_id" = $1"#,
                "SELECT",
                Some("goals"),
            ),
            (
                r#"INSERT INTO "keel_jobs" ("kind") VALUES ($1)"#,
                "INSERT",
                Some("keel_jobs"),
            ),
            (
                r#"UPDATE "svc_sends" SET "status" = $1"#,
                "UPDATE",
                Some("svc_sends"),
            ),
            (
                r#"delete from "events" where id = 'secret'"#,
                "DELETE",
                Some("events"),
            ),
            ("BEGIN", "BEGIN", None),
            ("SELECT 1", "SELECT", None),
            ("SELECT COUNT(*) FROM (SELECT 1) AS t", "SELECT", None),
        ];
        for (sql, op, table) in cases {
            let (o, t) = describe(sql);
            assert_eq!((o.as_str(), t.as_deref()), (op, table), "{sql}");
        }
    }
}
