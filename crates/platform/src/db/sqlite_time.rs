//! Timestamps in SQLite text, exactly as sqlx-sqlite writes and reads them
//! (`DateTime<Utc>` columns), for the inline reads that bind and decode
//! without sqlx. A bound value must be the same text sqlx binds, or a
//! comparison such as `expire_at > ?` would order differently.

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};

/// As sqlx-sqlite encodes a `DateTime<Utc>`.
pub fn encode(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, false)
}

/// As sqlx-sqlite decodes text into a `DateTime<Utc>`: RFC 3339 first, then
/// the formats SQLite's own date functions write.
pub fn decode(value: &str) -> Option<DateTime<Utc>> {
    if let Ok(dt) = DateTime::parse_from_rfc3339(value) {
        return Some(dt.with_timezone(&Utc));
    }
    const FORMATS: [&str; 12] = [
        "%F %T%.f",
        "%F %R",
        "%F %RZ",
        "%F %R%:z",
        "%F %T%.fZ",
        "%F %T%.f%:z",
        "%FT%R",
        "%FT%RZ",
        "%FT%R%:z",
        "%FT%T%.f",
        "%FT%T%.fZ",
        "%FT%T%.f%:z",
    ];
    for f in FORMATS {
        if let Ok(dt) = DateTime::parse_from_str(value, f) {
            return Some(dt.with_timezone(&Utc));
        }
        if let Ok(dt) = NaiveDateTime::parse_from_str(value, f) {
            return Some(dt.and_utc());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_timestamps_decode_as_sqlx_decodes_them() {
        for v in [
            "2026-01-01T00:00:00+00:00",
            "2026-01-01 00:00:00.000000+00:00",
            "2026-01-01 00:00:00",
            "2026-01-01T00:00:00Z",
            "2026-01-01T01:00:00+01:00",
        ] {
            assert_eq!(decode(v).map(|d| d.timestamp()), Some(1_767_225_600), "{v}");
        }
        assert!(decode("yesterday").is_none());
    }

    #[test]
    fn encoding_keeps_every_digit_and_round_trips() {
        let t = DateTime::from_timestamp(1_767_225_600, 123_456_789).unwrap_or_default();
        assert_eq!(encode(&t), "2026-01-01T00:00:00.123456789+00:00");
        assert_eq!(decode(&encode(&t)), Some(t));
        let whole = DateTime::from_timestamp(1_767_225_600, 0).unwrap_or_default();
        assert_eq!(encode(&whole), "2026-01-01T00:00:00+00:00");
    }
}
