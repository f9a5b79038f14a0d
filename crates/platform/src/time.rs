//! Timestamps on the wire: ISO 8601 UTC with milliseconds and `Z`
//! (`2026-01-02T03:04:05.678Z`), the shape the seeds' clients expect.

use chrono::{DateTime, SecondsFormat, Utc};

pub fn iso_millis(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// `#[serde(with = "keel_platform::time::millis")]`
pub mod millis {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::iso_millis(t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let raw = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&raw)
            .map(|t| t.with_timezone(&Utc))
            .map_err(serde::de::Error::custom)
    }
}

/// The same for `Option<DateTime<Utc>>`.
pub mod millis_opt {
    use chrono::{DateTime, Utc};
    use serde::Serializer;

    pub fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&super::iso_millis(t)),
            None => s.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn formats_with_millis_and_z() {
        let t = Utc
            .with_ymd_and_hms(2026, 1, 2, 3, 4, 5)
            .single()
            .map(|t| t + chrono::Duration::milliseconds(678));
        assert_eq!(
            t.map(|t| iso_millis(&t)).as_deref(),
            Some("2026-01-02T03:04:05.678Z")
        );
    }
}
