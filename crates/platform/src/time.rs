//! Timestamps on the wire: ISO 8601 UTC with milliseconds and `Z`
//! (`2026-01-02T03:04:05.678Z`), the shape existing clients expect.

use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};

pub fn iso_millis(t: &DateTime<Utc>) -> String {
    IsoMillis::of(t).as_str().to_owned()
}

/// `t` as [`iso_millis`] writes it, without allocating: every timestamp of
/// every response goes through here (chrono's general formatter was 2 % of
/// a page of events).
pub struct IsoMillis {
    buf: [u8; 24],
    /// Years outside 0000-9999, written by chrono.
    other: Option<String>,
}

impl IsoMillis {
    pub fn of(t: &DateTime<Utc>) -> Self {
        // Each accessor of a DateTime converts to local time again: once.
        let (date, time) = (t.naive_utc().date(), t.naive_utc().time());
        let year = date.year();
        let Ok(y) = u32::try_from(year) else {
            return Self::chrono(t);
        };
        if y > 9999 {
            return Self::chrono(t);
        }
        // Leap seconds (nanosecond >= 1e9) read as :60, as chrono writes them.
        let nanos = time.nanosecond();
        let (sec, millis) = if nanos >= 1_000_000_000 {
            (60, (nanos - 1_000_000_000) / 1_000_000)
        } else {
            (time.second(), nanos / 1_000_000)
        };
        let mut buf = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut n: u32| {
            for i in (at..at + width).rev() {
                // n % 10 < 10: the cast cannot truncate.
                buf[i] = b'0' + (n % 10) as u8;
                n /= 10;
            }
        };
        put(0, 4, y);
        put(5, 2, date.month());
        put(8, 2, date.day());
        put(11, 2, time.hour());
        put(14, 2, time.minute());
        put(17, 2, sec);
        put(20, 3, millis);
        Self { buf, other: None }
    }

    fn chrono(t: &DateTime<Utc>) -> Self {
        Self {
            buf: [0; 24],
            other: Some(t.to_rfc3339_opts(SecondsFormat::Millis, true)),
        }
    }

    pub fn as_str(&self) -> &str {
        match &self.other {
            Some(s) => s,
            // Only ASCII digits and separators were written.
            None => std::str::from_utf8(&self.buf).unwrap_or_default(),
        }
    }
}

/// `#[serde(with = "keel_platform::time::millis")]`
pub mod millis {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::IsoMillis::of(t).as_str())
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
            Some(t) => s.serialize_str(super::IsoMillis::of(t).as_str()),
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

    #[test]
    fn writes_what_chrono_writes_for_any_instant() {
        let chrono = |t: &DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Millis, true);
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut instants: Vec<DateTime<Utc>> = (0..20_000)
            .filter_map(|_| {
                // xorshift: spread over years -5000..=15000 and every nanosecond.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let secs = i64::try_from(x % 630_000_000_000).unwrap_or(0) - 220_000_000_000;
                let nanos = u32::try_from((x >> 20) % 1_000_000_000).unwrap_or(0);
                DateTime::from_timestamp(secs, nanos)
            })
            .collect();
        instants.extend([
            DateTime::UNIX_EPOCH,
            DateTime::<Utc>::MIN_UTC,
            DateTime::<Utc>::MAX_UTC,
            DateTime::from_timestamp(253_402_300_799, 999_999_999).unwrap_or_default(),
            DateTime::from_timestamp(-62_167_219_200, 0).unwrap_or_default(),
            // A leap second.
            DateTime::from_timestamp(1_483_228_799, 1_500_000_000).unwrap_or_default(),
        ]);
        for t in &instants {
            assert_eq!(iso_millis(t), chrono(t), "{t:?}");
        }
    }
}
