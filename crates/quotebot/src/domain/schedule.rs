//! When a guild's quote is due: at `motivationTime` (HH:MM) in its time
//! zone, every day; weekly on `motivationDay` (0 = Sunday … 6 = Saturday);
//! monthly on day `motivationDay` of the month (1–31; a shorter month uses
//! its last day). Local times are turned into instants with the zone's
//! rules at that date, so a quote stays at 09:00 across DST changes; a
//! time the clocks skip is moved to the first minute that exists after
//! it, and a time that happens twice is taken the first time.

use chrono::{
    DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveTime, TimeZone, Utc, Weekday,
};
use chrono_tz::Tz;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frequency {
    Daily,
    Weekly,
    Monthly,
}

impl Frequency {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Daily" => Some(Self::Daily),
            "Weekly" => Some(Self::Weekly),
            "Monthly" => Some(Self::Monthly),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Daily => "Daily",
            Self::Weekly => "Weekly",
            Self::Monthly => "Monthly",
        }
    }
}

/// A guild's schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub frequency: Frequency,
    pub time: NaiveTime,
    pub day: Option<i32>,
    pub tz: Tz,
}

/// `HH:MM`, 00:00 to 23:59.
pub fn parse_time(s: &str) -> Option<NaiveTime> {
    let (h, m) = s.trim().split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    NaiveTime::from_hms_opt(h.parse().ok()?, m.parse().ok()?, 0)
}

pub fn parse_zone(s: &str) -> Option<Tz> {
    s.trim().parse::<Tz>().ok()
}

fn days_in_month(year: i32, month: u32) -> u32 {
    let (y, m) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    NaiveDate::from_ymd_opt(y, m, 1)
        .and_then(|first| first.pred_opt())
        .map_or(28, |last| last.day())
}

fn weekday(day: i32) -> Option<Weekday> {
    Some(match day {
        0 => Weekday::Sun,
        1 => Weekday::Mon,
        2 => Weekday::Tue,
        3 => Weekday::Wed,
        4 => Weekday::Thu,
        5 => Weekday::Fri,
        6 => Weekday::Sat,
        _ => return None,
    })
}

impl Plan {
    /// Whether `day` fits the frequency (none needed for daily).
    pub fn valid_day(frequency: Frequency, day: Option<i32>) -> bool {
        match frequency {
            Frequency::Daily => true,
            Frequency::Weekly => day.is_some_and(|d| (0..=6).contains(&d)),
            Frequency::Monthly => day.is_some_and(|d| (1..=31).contains(&d)),
        }
    }

    /// Whether a quote goes out on local date `d`.
    fn on(&self, d: NaiveDate) -> bool {
        match self.frequency {
            Frequency::Daily => true,
            Frequency::Weekly => self.day.and_then(weekday) == Some(d.weekday()),
            Frequency::Monthly => self.day.is_some_and(|want| {
                let last = days_in_month(d.year(), d.month());
                let want = u32::try_from(want).unwrap_or(1).clamp(1, last);
                d.day() == want
            }),
        }
    }

    /// The instant of the quote on local date `d`.
    fn instant(&self, d: NaiveDate) -> DateTime<Utc> {
        let mut local = d.and_time(self.time);
        for _ in 0..(4 * 60) {
            match self.tz.from_local_datetime(&local) {
                LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => {
                    return t.with_timezone(&Utc);
                }
                LocalResult::None => local += Duration::minutes(1),
            }
        }
        Utc.from_utc_datetime(&d.and_time(self.time))
    }

    /// The latest quote time at or before `now`.
    pub fn last_due(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let today = now.with_timezone(&self.tz).date_naive();
        (0..=62)
            .filter_map(|back| today.checked_sub_signed(Duration::days(back)))
            .filter(|d| self.on(*d))
            .map(|d| self.instant(d))
            .find(|t| *t <= now)
    }

    /// The first quote time after `now`.
    pub fn next_after(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let today = now.with_timezone(&self.tz).date_naive();
        (-1..=62)
            .filter_map(|ahead| today.checked_add_signed(Duration::days(ahead)))
            .filter(|d| self.on(*d))
            .map(|d| self.instant(d))
            .find(|t| *t > now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map_or_else(|_| Utc::now(), |d| d.with_timezone(&Utc))
    }

    fn plan(f: Frequency, time: &str, day: Option<i32>, tz: &str) -> Plan {
        Plan {
            frequency: f,
            time: parse_time(time).unwrap_or_default(),
            day,
            tz: parse_zone(tz).unwrap_or(Tz::UTC),
        }
    }

    #[test]
    fn times_and_zones_are_checked() {
        assert!(parse_time("09:05").is_some());
        assert!(parse_time("23:59").is_some());
        assert!(parse_time("24:00").is_none());
        assert!(parse_time("9:05").is_none());
        assert!(parse_time("09:60").is_none());
        assert!(parse_zone("Europe/Berlin").is_some());
        assert!(parse_zone("Mars/Olympus").is_none());
        assert!(!Plan::valid_day(Frequency::Weekly, Some(7)));
        assert!(Plan::valid_day(Frequency::Monthly, Some(31)));
        assert!(!Plan::valid_day(Frequency::Monthly, None));
    }

    #[test]
    fn a_daily_quote_keeps_its_local_time_across_daylight_saving() {
        let p = plan(Frequency::Daily, "09:00", None, "Europe/Berlin");
        // Winter: UTC+1; summer (from 29 March 2026): UTC+2.
        assert_eq!(
            p.next_after(utc("2026-03-28T00:00:00Z")),
            Some(utc("2026-03-28T08:00:00Z"))
        );
        assert_eq!(
            p.next_after(utc("2026-03-29T00:00:00Z")),
            Some(utc("2026-03-29T07:00:00Z"))
        );
        assert_eq!(
            p.last_due(utc("2026-03-29T07:30:00Z")),
            Some(utc("2026-03-29T07:00:00Z"))
        );
        assert_eq!(
            p.last_due(utc("2026-03-29T06:59:00Z")),
            Some(utc("2026-03-28T08:00:00Z"))
        );
    }

    #[test]
    fn a_time_the_clocks_skip_moves_to_the_first_minute_after_and_a_repeated_one_is_taken_once() {
        // 29 March 2026, Berlin: 02:00 → 03:00.
        let skipped = plan(Frequency::Daily, "02:30", None, "Europe/Berlin");
        assert_eq!(
            skipped.next_after(utc("2026-03-28T23:00:00Z")),
            Some(utc("2026-03-29T01:00:00Z"))
        );
        // 25 October 2026, Berlin: 03:00 → 02:00, so 02:30 happens twice.
        let twice = plan(Frequency::Daily, "02:30", None, "Europe/Berlin");
        assert_eq!(
            twice.next_after(utc("2026-10-24T23:00:00Z")),
            Some(utc("2026-10-25T00:30:00Z"))
        );
        assert_eq!(
            twice.next_after(utc("2026-10-25T00:30:00Z")),
            Some(utc("2026-10-26T01:30:00Z"))
        );
    }

    #[test]
    fn weekly_and_monthly_quotes_fall_on_their_day_and_short_months_use_their_last() {
        let weekly = plan(Frequency::Weekly, "18:00", Some(1), "UTC"); // Mondays
        assert_eq!(
            weekly.next_after(utc("2026-11-23T18:00:00Z")),
            Some(utc("2026-11-30T18:00:00Z"))
        );
        assert_eq!(
            weekly.last_due(utc("2026-11-25T00:00:00Z")),
            Some(utc("2026-11-23T18:00:00Z"))
        );
        let monthly = plan(Frequency::Monthly, "08:00", Some(31), "America/New_York");
        // February 2026 has 28 days; New York is UTC-5 in February.
        assert_eq!(
            monthly.next_after(utc("2026-02-01T00:00:00Z")),
            Some(utc("2026-02-28T13:00:00Z"))
        );
        assert_eq!(
            monthly.next_after(utc("2026-02-28T13:00:00Z")),
            Some(utc("2026-03-31T12:00:00Z"))
        );
        let leap = plan(Frequency::Monthly, "08:00", Some(30), "UTC");
        assert_eq!(
            leap.next_after(utc("2028-02-01T00:00:00Z")),
            Some(utc("2028-02-29T08:00:00Z"))
        );
    }
}
