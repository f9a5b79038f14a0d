//! Push outcomes as Prometheus counters, with bounded labels:
//! `keel_push_messages_total{status, error}` as batches are answered and
//! `keel_push_receipts_total{status, error}` as receipts come. `error` is
//! one of Expo's documented codes, `REFUSED` (Expo refused the request
//! itself), `RETRIES_EXHAUSTED`, `other`, or empty.

use std::collections::BTreeMap;

use keel_platform::sea_orm::ActiveEnum;

use super::outcome::Written;

/// Expo's error codes (tickets and receipts).
const EXPO_CODES: [&str; 6] = [
    "DeviceNotRegistered",
    "MessageTooBig",
    "MessageRateExceeded",
    "MismatchSenderId",
    "InvalidCredentials",
    "UNKNOWN_ERROR",
];

/// The label of an error as stored.
pub fn error_label(error: Option<&str>) -> &'static str {
    let Some(e) = error else { return "" };
    if let Some(code) = EXPO_CODES.iter().find(|c| **c == e) {
        return code;
    }
    if e.starts_with("RETRIES_EXHAUSTED") {
        "RETRIES_EXHAUSTED"
    } else {
        "other"
    }
}

/// Counts a batch's stored outcomes.
pub fn messages(rows: &[Written]) {
    let mut by: BTreeMap<(String, &'static str), u64> = BTreeMap::new();
    for r in rows {
        let error = match error_label(r.ticket_error.as_deref()) {
            // A refusal of the whole request (no ticket, so never sent) is
            // stored with its reason.
            "other" if r.sent_at.is_none() => "REFUSED",
            label => label,
        };
        *by.entry((r.status.to_value(), error)).or_default() += 1;
    }
    for ((status, error), n) in by {
        metrics::counter!("keel_push_messages_total", "status" => status, "error" => error)
            .increment(n);
    }
}

/// Counts a page's stored receipts, each by its error (`None`: ok).
pub fn receipts(errors: &[Option<String>]) {
    let mut by: BTreeMap<Option<&str>, u64> = BTreeMap::new();
    for e in errors {
        *by.entry(e.as_deref()).or_default() += 1;
    }
    for (error, n) in by {
        let status = if error.is_some() { "error" } else { "ok" };
        metrics::counter!("keel_push_receipts_total", "status" => status, "error" => error_label(error))
            .increment(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_labels_are_expo_codes_or_one_of_three_words() {
        assert_eq!(error_label(None), "");
        assert_eq!(
            error_label(Some("DeviceNotRegistered")),
            "DeviceNotRegistered"
        );
        assert_eq!(
            error_label(Some("RETRIES_EXHAUSTED: 503")),
            "RETRIES_EXHAUSTED"
        );
        assert_eq!(error_label(Some("push token user@example.com")), "other");
    }
}
