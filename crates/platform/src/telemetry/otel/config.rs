//! The standard `OTEL_*` variables, read and checked once at start. A value
//! keel cannot use stops it, naming the variable: an operator who asked
//! for traces and silently got none finds out on the bad night, not at
//! deploy time.

use std::collections::HashMap;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_sdk::trace::Sampler;

// The names of the variables read here.
const OTEL_EXPORTER_OTLP_COMPRESSION: &str = "OTEL_EXPORTER_OTLP_COMPRESSION";
const OTEL_EXPORTER_OTLP_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const OTEL_EXPORTER_OTLP_HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
const OTEL_EXPORTER_OTLP_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const OTEL_EXPORTER_OTLP_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
const OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: &str = "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION";
const OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
const OTEL_EXPORTER_OTLP_TRACES_HEADERS: &str = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
const OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
const OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT";
const OTEL_RESOURCE_ATTRIBUTES: &str = "OTEL_RESOURCE_ATTRIBUTES";
const OTEL_SDK_DISABLED: &str = "OTEL_SDK_DISABLED";
const OTEL_SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
const OTEL_TRACES_EXPORTER: &str = "OTEL_TRACES_EXPORTER";
const OTEL_TRACES_SAMPLER: &str = "OTEL_TRACES_SAMPLER";
const OTEL_TRACES_SAMPLER_ARG: &str = "OTEL_TRACES_SAMPLER_ARG";

/// A variable keel reads, with what was wrong with its value.
#[derive(Debug, thiserror::Error)]
#[error("{var}: {problem}")]
pub struct OtelConfigError {
    pub var: &'static str,
    pub problem: String,
}

fn bad(var: &'static str, problem: impl Into<String>) -> OtelConfigError {
    OtelConfigError {
        var,
        problem: problem.into(),
    }
}

/// What the variables ask for, when they ask for traces at all. Everything
/// the exporter needs is here, given to it explicitly: the exporter never
/// reads the environment itself, so `NAME_FILE` and `keel.toml` work for
/// these variables as for keel's own (a vendor's key in the headers is a
/// secret to keep in a file).
#[derive(Debug)]
pub struct OtelConfig {
    pub service_name: String,
    pub resource: Vec<KeyValue>,
    pub sampler: Sampler,
    /// The longest one export may take.
    pub timeout: Duration,
    /// Where spans go: the traces URL as given, or the base URL with
    /// `/v1/traces`.
    pub endpoint: String,
    /// Sent with each export.
    pub headers: HashMap<String, String>,
    pub gzip: bool,
}

/// The traces-only variable's value when set, else the every-signal one's;
/// the name of the one read (for its errors).
fn either(
    get: &impl Fn(&str) -> Option<String>,
    traces_only: &'static str,
    every_signal: &'static str,
) -> Option<(&'static str, String)> {
    get(traces_only)
        .map(|v| (traces_only, v))
        .or_else(|| get(every_signal).map(|v| (every_signal, v)))
}

/// Reads the variables through `var` (keel's configuration source, or a
/// test's map). `None` when traces are off: no endpoint is set,
/// `OTEL_SDK_DISABLED` is true, or `OTEL_TRACES_EXPORTER` is `none`.
pub fn read(var: impl Fn(&str) -> Option<String>) -> Result<Option<OtelConfig>, OtelConfigError> {
    let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let disabled = match get(OTEL_SDK_DISABLED).as_deref().map(str::trim) {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        Some(v) => {
            return Err(bad(
                OTEL_SDK_DISABLED,
                format!("{v:?} is not true or false"),
            ));
        }
    };
    match get(OTEL_TRACES_EXPORTER).as_deref().map(str::trim) {
        None | Some("otlp") => {}
        Some("none") => return Ok(None),
        Some(v) => {
            return Err(bad(
                OTEL_TRACES_EXPORTER,
                format!("{v:?}: keel exports traces over OTLP only (otlp or none)"),
            ));
        }
    }
    for name in [
        OTEL_EXPORTER_OTLP_PROTOCOL,
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
    ] {
        if let Some(v) = get(name) {
            protocol(name, &v)?;
        }
    }
    let mut endpoint = None;
    for name in [
        OTEL_EXPORTER_OTLP_ENDPOINT,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    ] {
        if let Some(v) = get(name) {
            let url = checked_url(name, &v)?;
            endpoint = Some(if name == OTEL_EXPORTER_OTLP_ENDPOINT {
                format!("{}/v1/traces", url.trim_end_matches('/'))
            } else {
                url
            });
        }
    }
    let mut headers = HashMap::new();
    for name in [
        OTEL_EXPORTER_OTLP_HEADERS,
        OTEL_EXPORTER_OTLP_TRACES_HEADERS,
    ] {
        if let Some(v) = get(name) {
            headers.extend(header_pairs(name, &v)?);
        }
    }
    let gzip = match either(
        &get,
        OTEL_EXPORTER_OTLP_TRACES_COMPRESSION,
        OTEL_EXPORTER_OTLP_COMPRESSION,
    ) {
        Some((name, v)) => compression(name, &v)?,
        None => false,
    };
    let mut timeout = Duration::from_secs(10);
    // Both checked; the traces-only one, read last, wins.
    for name in [
        OTEL_EXPORTER_OTLP_TIMEOUT,
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
    ] {
        if let Some(v) = get(name) {
            timeout = millis(name, &v)?;
        }
    }
    let resource = match get(OTEL_RESOURCE_ATTRIBUTES) {
        Some(v) => pairs(OTEL_RESOURCE_ATTRIBUTES, &v)?,
        None => Vec::new(),
    };
    let sampler = sampler(
        get(OTEL_TRACES_SAMPLER).as_deref(),
        get(OTEL_TRACES_SAMPLER_ARG).as_deref(),
    )?;
    let Some(endpoint) = endpoint.filter(|_| !disabled) else {
        return Ok(None);
    };
    let service_name = get(OTEL_SERVICE_NAME)
        .or_else(|| {
            resource
                .iter()
                .find(|(k, _)| k == "service.name")
                .map(|(_, v)| v.clone())
        })
        .unwrap_or_else(|| "keel".to_owned());
    Ok(Some(OtelConfig {
        service_name,
        resource: resource
            .into_iter()
            .filter(|(k, _)| k != "service.name")
            .map(|(k, v)| KeyValue::new(k, v))
            .collect(),
        sampler,
        timeout,
        endpoint,
        headers,
        gzip,
    }))
}

/// An http(s) URL with a host.
fn checked_url(var: &'static str, v: &str) -> Result<String, OtelConfigError> {
    let url = url::Url::parse(v.trim()).map_err(|e| bad(var, format!("{v:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(bad(var, format!("{v:?} is not an http(s) URL with a host")));
    }
    Ok(v.trim().to_owned())
}

fn protocol(var: &'static str, v: &str) -> Result<(), OtelConfigError> {
    match v.trim() {
        "http/protobuf" => Ok(()),
        _ => Err(bad(
            var,
            format!("{v:?}: keel sends http/protobuf (grpc and http/json are not built in)"),
        )),
    }
}

/// Headers as `key=value,...`, each a valid header name and value.
fn header_pairs(var: &'static str, v: &str) -> Result<Vec<(String, String)>, OtelConfigError> {
    let all = pairs(var, v)?;
    for (name, value) in &all {
        http::HeaderName::try_from(name.as_str())
            .map_err(|_| bad(var, format!("{name:?} is not a header name")))?;
        http::HeaderValue::try_from(value.as_str())
            .map_err(|_| bad(var, format!("the value of {name} is not a header value")))?;
    }
    Ok(all)
}

/// Whether exports are gzipped.
fn compression(var: &'static str, v: &str) -> Result<bool, OtelConfigError> {
    match v.trim() {
        "gzip" => Ok(true),
        "none" => Ok(false),
        _ => Err(bad(var, format!("{v:?}: gzip or none"))),
    }
}

fn millis(var: &'static str, v: &str) -> Result<Duration, OtelConfigError> {
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .ok_or_else(|| bad(var, format!("{v:?} is not a number of milliseconds")))
}

/// `key=value,key=value`, each part percent-decoded (the W3C Baggage form
/// the specification gives these variables).
fn pairs(var: &'static str, v: &str) -> Result<Vec<(String, String)>, OtelConfigError> {
    let decode = |s: &str| {
        url::form_urlencoded::parse(format!("x={}", s.trim().replace('+', "%2B")).as_bytes())
            .next()
            .map(|(_, d)| d.into_owned())
            .unwrap_or_default()
    };
    v.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|part| {
            let (k, val) = part
                .split_once('=')
                .ok_or_else(|| bad(var, format!("{:?} is not key=value", part.trim())))?;
            let key = decode(k);
            if key.is_empty() {
                return Err(bad(var, format!("{:?} has an empty key", part.trim())));
            }
            Ok((key, decode(val)))
        })
        .collect()
}

/// `OTEL_TRACES_SAMPLER` and its argument; parent-based 100 % by default.
fn sampler(name: Option<&str>, arg: Option<&str>) -> Result<Sampler, OtelConfigError> {
    let ratio = || -> Result<f64, OtelConfigError> {
        let Some(arg) = arg else { return Ok(1.0) };
        match arg.trim().parse::<f64>() {
            Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
            _ => Err(bad(
                OTEL_TRACES_SAMPLER_ARG,
                format!("{arg:?} is not a ratio from 0 to 1"),
            )),
        }
    };
    let parent = |s: Sampler| Sampler::ParentBased(Box::new(s));
    Ok(match name.map(str::trim) {
        None | Some("parentbased_always_on") => parent(Sampler::AlwaysOn),
        Some("always_on") => Sampler::AlwaysOn,
        Some("always_off") => Sampler::AlwaysOff,
        Some("traceidratio") => Sampler::TraceIdRatioBased(ratio()?),
        Some("parentbased_always_off") => parent(Sampler::AlwaysOff),
        Some("parentbased_traceidratio") => parent(Sampler::TraceIdRatioBased(ratio()?)),
        Some(other) => {
            return Err(bad(
                OTEL_TRACES_SAMPLER,
                format!(
                    "{other:?}: one of always_on, always_off, traceidratio, \
                     parentbased_always_on, parentbased_always_off, parentbased_traceidratio"
                ),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<Option<OtelConfig>, OtelConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        read(|k| map.get(k).cloned())
    }

    const AT: (&str, &str) = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");

    #[test]
    fn traces_are_off_without_an_endpoint_or_when_disabled() {
        assert!(with(&[]).unwrap().is_none());
        assert!(
            with(&[AT, ("OTEL_SDK_DISABLED", "true")])
                .unwrap()
                .is_none()
        );
        assert!(
            with(&[AT, ("OTEL_TRACES_EXPORTER", "none")])
                .unwrap()
                .is_none()
        );
        assert!(with(&[AT]).unwrap().is_some());
    }

    #[test]
    fn the_service_name_defaults_to_keel_and_the_variable_wins_over_the_attributes() {
        assert_eq!(with(&[AT]).unwrap().unwrap().service_name, "keel");
        let attrs = (
            "OTEL_RESOURCE_ATTRIBUTES",
            "service.name=a,deployment.environment=prod%20eu",
        );
        let cfg = with(&[AT, attrs]).unwrap().unwrap();
        assert_eq!(cfg.service_name, "a");
        assert_eq!(
            cfg.resource,
            vec![KeyValue::new("deployment.environment", "prod eu")]
        );
        let named = with(&[AT, attrs, ("OTEL_SERVICE_NAME", "b")])
            .unwrap()
            .unwrap();
        assert_eq!(named.service_name, "b");
    }

    #[test]
    fn a_value_keel_cannot_use_names_its_variable() {
        let cases = [
            ("OTEL_SDK_DISABLED", "yes"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://x/v1/traces"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "no-equals-sign"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "bad name=1"),
            ("OTEL_RESOURCE_ATTRIBUTES", "=x"),
            ("OTEL_TRACES_SAMPLER", "sometimes"),
            ("OTEL_TRACES_EXPORTER", "jaeger"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "brotli"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "10s"),
        ];
        for (var, value) in cases {
            let err = with(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                (var, value),
            ])
            .expect_err(value);
            assert_eq!(err.var, var, "{value}: {err}");
        }
        let err = with(&[
            AT,
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "1.5"),
        ])
        .unwrap_err();
        assert_eq!(err.var, "OTEL_TRACES_SAMPLER_ARG");
    }

    #[test]
    fn sampling_is_parent_based_at_the_ratio_asked_for() {
        let cfg = with(&[
            AT,
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
        ])
        .unwrap()
        .unwrap();
        assert!(format!("{:?}", cfg.sampler).contains("0.25"));
    }
}
