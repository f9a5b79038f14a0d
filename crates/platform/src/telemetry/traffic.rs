//! The last hour of keel's own traffic, from its own metrics, for the
//! operator console (which must not need Prometheus): once a minute the
//! request counter and latency histogram are read off the process's
//! recorder (summed over every service but the console's own, every route
//! and method), and the console draws, per minute, requests a second,
//! server errors (5xx) a second and the p99 latency (the histogram's
//! bucket bound it falls under).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

/// How often the counters are read, and how many readings are kept (an
/// hour's worth, and one more for the first minute's difference).
const EVERY: Duration = Duration::from_secs(60);
const KEPT: usize = 61;

/// The counters at one time.
#[derive(Debug, Clone, Default, PartialEq)]
struct Reading {
    at: DateTime<Utc>,
    requests: f64,
    errors: f64,
    /// Cumulative count by bucket bound (`+Inf` as infinity).
    buckets: Vec<(f64, f64)>,
}

/// One interval between two readings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct Interval {
    pub end: DateTime<Utc>,
    pub requests_per_second: f64,
    pub errors_per_second: f64,
    /// The bucket bound 99 % of the interval's requests finished under
    /// (`None`: no request).
    pub p99_seconds: Option<f64>,
}

/// The process's readings (cheap to clone).
#[derive(Clone, Default)]
pub struct Traffic(Arc<Mutex<VecDeque<Reading>>>);

impl Traffic {
    fn lock(&self) -> MutexGuard<'_, VecDeque<Reading>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Reads the counters now and keeps the reading.
    pub fn sample(&self) {
        let Some(handle) = super::prometheus() else {
            return;
        };
        let reading = parse(&handle.render(), Utc::now());
        let mut kept = self.lock();
        kept.push_back(reading);
        while kept.len() > KEPT {
            kept.pop_front();
        }
    }

    /// Samples now and every minute until `stop`.
    pub async fn run(self, stop: CancellationToken) {
        let mut every = tokio::time::interval(EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = every.tick() => self.sample(),
            }
        }
    }

    /// The kept intervals, oldest first, and the one from the last reading
    /// to now.
    pub fn last_hour(&self) -> Vec<Interval> {
        let mut readings: Vec<Reading> = self.lock().iter().cloned().collect();
        if let Some(handle) = super::prometheus() {
            readings.push(parse(&handle.render(), Utc::now()));
        }
        readings
            .windows(2)
            .filter_map(|w| interval(&w[0], &w[1]))
            .collect()
    }
}

fn interval(a: &Reading, b: &Reading) -> Option<Interval> {
    let secs = (b.at - a.at).num_milliseconds() as f64 / 1000.0;
    if secs <= 0.0 {
        return None;
    }
    let count = (b.requests - a.requests).max(0.0);
    let before: BTreeMap<u64, f64> = a.buckets.iter().map(|(le, n)| (le.to_bits(), *n)).collect();
    let p99_seconds = b
        .buckets
        .iter()
        .map(|(le, n)| (*le, n - before.get(&le.to_bits()).copied().unwrap_or(0.0)))
        .find(|(_, n)| count > 0.0 && *n >= 0.99 * count)
        .map(|(le, _)| le)
        .filter(|le| le.is_finite());
    Some(Interval {
        end: b.at,
        requests_per_second: count / secs,
        errors_per_second: (b.errors - a.errors).max(0.0) / secs,
        p99_seconds,
    })
}

/// The value of label `name` in a sample line's labels.
fn label<'a>(labels: &'a str, name: &str) -> Option<&'a str> {
    let start = labels.find(&format!("{name}=\""))? + name.len() + 2;
    let rest = &labels[start..];
    Some(&rest[..rest.find('"')?])
}

/// The request counters in Prometheus's text format.
fn parse(text: &str, at: DateTime<Utc>) -> Reading {
    let mut r = Reading {
        at,
        ..Reading::default()
    };
    let mut buckets: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for line in text.lines() {
        let Some((head, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let Some((name, labels)) = head.split_once('{') else {
            continue;
        };
        if label(labels, "service") == Some("console") {
            continue;
        }
        match name {
            "keel_http_requests_total" => {
                r.requests += value;
                if label(labels, "status").is_some_and(|s| s.starts_with('5')) {
                    r.errors += value;
                }
            }
            "keel_http_request_duration_seconds_bucket" => {
                let le = match label(labels, "le") {
                    Some("+Inf") => f64::INFINITY,
                    Some(le) => le.parse().unwrap_or(f64::INFINITY),
                    None => continue,
                };
                // Bounds are positive: their bits sort as they do.
                buckets.entry(le.to_bits()).or_insert((le, 0.0)).1 += value;
            }
            _ => {}
        }
    }
    r.buckets = buckets.into_values().collect();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"# TYPE keel_http_requests_total counter
keel_http_requests_total{service="accounts",method="GET",route="/account",status="200"} 90
keel_http_requests_total{service="accounts",method="GET",route="/account",status="503"} 10
keel_http_requests_total{service="console",method="GET",route="/console/v1/health",status="200"} 1000
keel_http_request_duration_seconds_bucket{service="accounts",method="GET",route="/account",status="200",le="0.01"} 85
keel_http_request_duration_seconds_bucket{service="accounts",method="GET",route="/account",status="200",le="0.1"} 90
keel_http_request_duration_seconds_bucket{service="accounts",method="GET",route="/account",status="200",le="+Inf"} 90
keel_http_request_duration_seconds_bucket{service="accounts",method="GET",route="/account",status="503",le="0.01"} 0
keel_http_request_duration_seconds_bucket{service="accounts",method="GET",route="/account",status="503",le="0.1"} 10
keel_http_request_duration_seconds_bucket{service="accounts",method="GET",route="/account",status="503",le="+Inf"} 10
"#;

    #[test]
    fn an_interval_has_its_rate_its_errors_and_its_p99_bucket_without_the_consoles_own() {
        let t0 = Utc::now();
        let a = Reading {
            at: t0,
            ..Reading::default()
        };
        let b = parse(TEXT, t0 + chrono::Duration::seconds(10));
        assert_eq!((b.requests, b.errors), (100.0, 10.0));
        let i = interval(&a, &b).unwrap_or_else(|| unreachable!());
        assert!((i.requests_per_second - 10.0).abs() < 1e-9);
        assert!((i.errors_per_second - 1.0).abs() < 1e-9);
        // 85 of 100 under 10 ms, all 100 under 100 ms.
        assert_eq!(i.p99_seconds, Some(0.1));
    }
}
