//! `keel db copy`: what the command says before, during and after the
//! copy (keel_platform::copy does it): the keys the target deployment
//! needs, each step, each table's progress (a bar on a terminal, a line a
//! second otherwise), and the comparison of every table.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use keel_platform::config::{DatabaseUrl, PlatformConfig, Source};
use keel_platform::copy::{self, Plan, Progress};

use crate::services;

// The names of the variables read here.
const ACCOUNTS_JWT_SECRET: &str = "KEEL_ACCOUNTS_JWT_SECRET";
const SECRET_KEY: &str = "KEEL_SECRET_KEY";

/// Copies `from` (the configured database when none) to `to`.
pub async fn run(
    src: &Source,
    cfg: &PlatformConfig,
    from: Option<String>,
    to: String,
) -> anyhow::Result<()> {
    let from = from.unwrap_or_else(|| match &cfg.database.url {
        DatabaseUrl::Sqlite(url) => url.clone(),
        DatabaseUrl::Postgres(url) => url.expose().to_owned(),
    });
    eprintln!("keel db copy: from {} to {}", redact(&from), redact(&to));
    for line in keys_to_carry(src, &cfg.data_dir) {
        eprintln!("{line}");
    }
    let mut sets = vec![&keel_platform::schema::MIGRATIONS];
    sets.extend(services::migration_sets(
        &services::http().collect::<Vec<_>>(),
    ));
    let plan = Plan { from, to, sets };
    let mut progress: Box<dyn Progress> = if std::io::stderr().is_terminal() {
        Box::new(Bars::default())
    } else {
        Box::new(Lines::default())
    };
    let report = copy::run(plan, progress.as_mut()).await?;
    print!("{}", report.render());
    println!(
        "copied {} rows of {} tables in {:.1?}; every table holds the same rows on both sides",
        report.rows(),
        report.tables.len(),
        report.took
    );
    Ok(())
}

/// The source's URL when `--from` is not given (`_FILE` reads a file).
pub const FROM: &str = "KEEL_COPY_FROM";
/// The target's URL when `--to` is not given (`_FILE` reads a file).
pub const TO: &str = "KEEL_COPY_TO";

/// The URL without its password: the user information's, and a `password`
/// query parameter's (libpq reads one there too).
pub fn redact(url: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let base = match (base.find("://"), base.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &base[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}:***{}", &base[..scheme + 3], &base[at..])
        }
        _ => base.to_owned(),
    };
    let Some(query) = query else {
        return base;
    };
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{base}?{}", query.join("&"))
}

/// What the deployment on the target must be given so that sealed
/// two-factor secrets open and tokens stay valid: the variables' names and
/// where their values are, never the values.
pub fn keys_to_carry(src: &Source, data_dir: &Path) -> Vec<String> {
    let mut lines = vec![
        "keys: sealed two-factor secrets and signed tokens need the same keys on the target's deployment:".to_owned(),
    ];
    for (var, file) in [
        (SECRET_KEY, "secret.key"),
        (ACCOUNTS_JWT_SECRET, "accounts-jwt.key"),
    ] {
        let path = data_dir.join(file);
        let line = if src.get(var).is_some() {
            format!("  {var}: the value set here")
        } else if path.exists() {
            format!(
                "  {var}: the contents of {} (or {var}_FILE={})",
                path.display(),
                path.display()
            )
        } else {
            format!("  {var}: not set here and no {file} yet: nothing sealed with it to carry")
        };
        lines.push(line);
    }
    lines
}

/// Progress as bars (a terminal).
#[derive(Default)]
struct Bars {
    bar: Option<ProgressBar>,
}

impl Progress for Bars {
    fn step(&mut self, what: &str) {
        eprintln!("{what}");
    }

    fn table(&mut self, name: &str, rows: u64) {
        let bar = ProgressBar::new(rows);
        let style = ProgressStyle::with_template(
            "{prefix:28} [{bar:30}] {human_pos:>11}/{human_len:11} {per_sec:>14} eta {eta}",
        )
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(name.to_owned());
        self.bar = Some(bar);
    }

    fn advance(&mut self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    fn table_done(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish();
        }
    }
}

/// Progress as plain lines: when a table starts, at most twice a second
/// while it is copied, and when it is done.
#[derive(Default)]
struct Lines {
    table: String,
    rows: u64,
    done: u64,
    started: Option<Instant>,
    said: Option<Instant>,
}

impl Progress for Lines {
    fn step(&mut self, what: &str) {
        eprintln!("{what}");
    }

    fn table(&mut self, name: &str, rows: u64) {
        eprintln!("{name}: {rows} rows to copy");
        *self = Self {
            table: name.to_owned(),
            rows,
            started: Some(Instant::now()),
            said: Some(Instant::now()),
            ..Self::default()
        };
    }

    fn advance(&mut self, n: u64) {
        self.done += n;
        if self
            .said
            .is_some_and(|s| s.elapsed() >= Duration::from_secs(1))
        {
            self.said = Some(Instant::now());
            let secs = self
                .started
                .map_or(0.0, |s| s.elapsed().as_secs_f64())
                .max(0.001);
            let rate = self.done as f64 / secs;
            let left = self.rows.saturating_sub(self.done) as f64 / rate.max(1.0);
            eprintln!(
                "{}: {} of {} rows, {:.0} rows/s, {:.0} s left",
                self.table, self.done, self.rows, rate, left
            );
        }
    }

    fn table_done(&mut self) {
        let took = self.started.map_or(Duration::ZERO, |s| s.elapsed());
        let rate = self.done as f64 / took.as_secs_f64().max(0.001);
        eprintln!(
            "{}: {} rows in {:.2?} ({:.0} rows/s)",
            self.table, self.done, took, rate
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_printed_without_its_password() {
        assert_eq!(
            redact("postgres://keel:s3cret@db:5432/keel"),
            "postgres://keel:***@db:5432/keel"
        );
        assert_eq!(
            redact("sqlite:///var/lib/keel/keel.db"),
            "sqlite:///var/lib/keel/keel.db"
        );
        assert_eq!(redact("postgres://db/keel"), "postgres://db/keel");
        assert_eq!(
            redact("postgres://db/keel?user=keel&password=s3cret&sslmode=require"),
            "postgres://db/keel?user=keel&password=***&sslmode=require"
        );
        assert_eq!(
            redact("postgres://k:s3cret@db/keel?Password=again"),
            "postgres://k:***@db/keel?Password=***"
        );
    }
}
