//! Session locations from a GeoIP database in the CSV layout of DB-IP's
//! free "IP to Country/City Lite" files: `ip_start,ip_end,<fields...>`,
//! where the fields are `country` (country files) or
//! `continent,country,region,city,...` (city files). Without a database
//! every location is `unknown`.

use std::net::IpAddr;
use std::path::Path;

use keel_platform::config::ConfigError;

// The names of the variables read here.
const ACCOUNTS_GEOIP_CSV: &str = "KEEL_ACCOUNTS_GEOIP_CSV";

pub const UNKNOWN: &str = "unknown";

#[derive(Default)]
pub struct GeoDb {
    /// Sorted by start; ranges do not overlap.
    ranges: Vec<(IpAddr, IpAddr, String)>,
}

impl GeoDb {
    pub fn empty() -> Self {
        Self::default()
    }

    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let bad = |reason: String| ConfigError::invalid(ACCOUNTS_GEOIP_CSV, reason);
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_path(path)
            .map_err(|e| bad(format!("{}: {e}", path.display())))?;
        let mut ranges = Vec::new();
        for (n, record) in reader.records().enumerate() {
            let record = record.map_err(|e| bad(format!("line {}: {e}", n + 1)))?;
            let parse = |i: usize| record.get(i).and_then(|v| v.trim().parse::<IpAddr>().ok());
            let (Some(start), Some(end)) = (parse(0), parse(1)) else {
                return Err(bad(format!("line {}: expected ip_start,ip_end,...", n + 1)));
            };
            ranges.push((start, end, describe(&record)));
        }
        ranges.sort_by_key(|a| a.0);
        tracing::info!(ranges = ranges.len(), path = %path.display(), "loaded the GeoIP database");
        Ok(Self { ranges })
    }

    /// `City, Region, CC`, `CC`, or `unknown`.
    pub fn locate(&self, ip: IpAddr) -> String {
        let i = self.ranges.partition_point(|(start, _, _)| *start <= ip);
        i.checked_sub(1)
            .and_then(|i| self.ranges.get(i))
            .filter(|(start, end, _)| same_family(*start, ip) && ip <= *end)
            .map_or_else(|| UNKNOWN.to_owned(), |(_, _, place)| place.clone())
    }
}

fn same_family(a: IpAddr, b: IpAddr) -> bool {
    a.is_ipv4() == b.is_ipv4()
}

fn describe(record: &csv::StringRecord) -> String {
    let field = |i: usize| record.get(i).map(str::trim).filter(|v| !v.is_empty());
    let place = match record.len() {
        0..=3 => field(2).map(str::to_owned),
        // continent, country, region, city
        _ => {
            let parts: Vec<&str> = [field(5), field(4), field(3)]
                .into_iter()
                .flatten()
                .collect();
            (!parts.is_empty()).then(|| parts.join(", "))
        }
    };
    place.unwrap_or_else(|| UNKNOWN.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_found_in_their_ranges() -> Result<(), ConfigError> {
        let dir = tempfile::tempdir().map_err(|e| ConfigError::invalid("T", e.to_string()))?;
        let path = dir.path().join("geo.csv");
        std::fs::write(
            &path,
            "1.0.0.0,1.0.0.255,OC,AU,Queensland,South Brisbane\n8.8.8.0,8.8.8.255,NA,US,California,Mountain View\n2001:db8::,2001:db8::ffff,EU,DE,,\n",
        )
        .map_err(|e| ConfigError::invalid("T", e.to_string()))?;
        let db = GeoDb::load(&path)?;
        let ip = |s: &str| s.parse::<IpAddr>().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        assert_eq!(db.locate(ip("8.8.8.8")), "Mountain View, California, US");
        assert_eq!(db.locate(ip("1.0.0.1")), "South Brisbane, Queensland, AU");
        assert_eq!(db.locate(ip("2001:db8::1")), "DE");
        assert_eq!(db.locate(ip("9.9.9.9")), "unknown");
        assert_eq!(GeoDb::empty().locate(ip("8.8.8.8")), "unknown");
        Ok(())
    }
}
