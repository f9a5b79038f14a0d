//! `keel db copy`: every row of every table keel stores, from one database
//! to another (SQLite to PostgreSQL, or back), verified.
//!
//! Safe by construction (docs/operations.md, "From SQLite to PostgreSQL"):
//! the source must be at exactly this binary's migrations, the target is
//! migrated to them first and must hold no row of keel's; the source is
//! read in one snapshot (a read transaction) and the copy is refused if
//! anything wrote to it meanwhile; the target is written in one
//! transaction on PostgreSQL, or into a file beside the target renamed
//! into place on SQLite, so a copy that stops half-way leaves nothing a
//! second run must undo. After the last row every table is read back from
//! the target and compared with what was read from the source: rows and a
//! SHA-256 of every row in a canonical form, in key order. Only then is
//! the copy committed.

mod cell;
mod conn;
mod order;
mod table;
mod target;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

pub use crate::migrate::spec::TableSpec;
pub use table::Tally;

use crate::migrate::{MigrateError, MigrationSet};
use conn::Conn;

/// What one component (the platform, a service) stores: its migrations
/// and its tables.
struct Component {
    migrations: &'static MigrationSet,
    tables: Vec<TableSpec>,
    /// Whether the source has it (a service never started there has no
    /// tables: the target gets them, empty).
    at_source: bool,
}

/// Told what the copy is doing, as it does it.
pub trait Progress: Send {
    /// A step, in a sentence.
    fn step(&mut self, what: &str);
    /// A table starts: how many rows it has.
    fn table(&mut self, name: &str, rows: u64);
    /// `n` more rows of the current table were written.
    fn advance(&mut self, n: u64);
    /// The current table is written.
    fn table_done(&mut self);
}

/// One table's outcome.
#[derive(Debug, Clone)]
pub struct TableReport {
    pub name: String,
    pub source: Tally,
    pub target: Tally,
    pub took: Duration,
}

impl TableReport {
    pub fn ok(&self) -> bool {
        self.source == self.target
    }
}

/// Every table's outcome.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub tables: Vec<TableReport>,
    pub took: Duration,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.tables.iter().all(TableReport::ok)
    }

    pub fn rows(&self) -> u64 {
        self.tables.iter().map(|t| t.source.rows).sum()
    }

    /// The comparison as a table, one line per table.
    pub fn render(&self) -> String {
        let width = self
            .tables
            .iter()
            .map(|t| t.name.len())
            .max()
            .unwrap_or(5)
            .max(5);
        let mut out = format!(
            "{:width$}  {:>10}  {:>10}  {:16}  result\n",
            "table", "source", "target", "sha-256"
        );
        for t in &self.tables {
            out.push_str(&format!(
                "{:width$}  {:>10}  {:>10}  {:16}  {}\n",
                t.name,
                t.source.rows,
                t.target.rows,
                t.source.sha256.get(..16).unwrap_or_default(),
                if t.ok() { "same" } else { "DIFFERENT" }
            ));
        }
        out
    }
}

/// Why a copy was refused or failed; nothing was written to the target
/// but its migrations.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error("cannot reach the {side} database: {source}")]
    Connect {
        side: &'static str,
        #[source]
        source: sea_orm::sqlx::Error,
    },
    #[error("the {side} and the target are the same database")]
    Same { side: &'static str },
    #[error("table {table}: column {column} is of a type the copy cannot carry ({kind})")]
    Unsupported {
        table: String,
        column: String,
        kind: String,
    },
    #[error(
        "the source database is not at this keel's migrations ({0}); run `keel migrate` with DATABASE_URL set to the source first, with this keel"
    )]
    SourceBehind(String),
    #[error(
        "the source database has migrations this keel does not know ({0}): it was written by a newer keel; copy it with that version"
    )]
    SourceAhead(String),
    #[error(
        "the target database has migrations this keel does not know ({0}): it belongs to another keel version"
    )]
    TargetAhead(String),
    #[error(
        "the target database already holds keel's data ({rows} rows in {table}): keel db copy neither merges nor overwrites; give it an empty database"
    )]
    TargetNotEmpty { table: String, rows: u64 },
    #[error("migrating the target: {0}")]
    Migrate(#[from] MigrateError),
    #[error(transparent)]
    Table(#[from] table::TableError),
    #[error("{what}: {source}")]
    Sql {
        what: String,
        #[source]
        source: sea_orm::sqlx::Error,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the source was written while it was copied (is keel still running on it?): stop every keel process using it and copy again; nothing was kept"
    )]
    SourceWritten,
    #[error("the copy does not match the source, nothing was kept:\n{0}")]
    Mismatch(String),
}

fn sql(what: &str) -> impl FnOnce(sea_orm::sqlx::Error) -> CopyError + '_ {
    move |source| CopyError::Sql {
        what: what.to_owned(),
        source,
    }
}

/// A copy from `from` to `to` (database URLs: `sqlite://PATH` or
/// `postgres://...`) of the tables of `sets` (the platform's and each
/// service's migration sets, each once).
pub struct Plan {
    pub from: String,
    pub to: String,
    pub sets: Vec<&'static MigrationSet>,
}

/// Copies, verifies and commits; the report says what each table held.
pub async fn run(plan: Plan, progress: &mut dyn Progress) -> Result<Report, CopyError> {
    let started = Instant::now();
    let mut components: Vec<Component> = plan
        .sets
        .iter()
        .map(|set| Component {
            migrations: set,
            tables: (set.tables)(),
            at_source: true,
        })
        .collect();
    for t in components.iter().flat_map(|c| &c.tables) {
        if let Some((column, kind)) = t.unsupported() {
            return Err(CopyError::Unsupported {
                table: t.name.clone(),
                column: column.to_owned(),
                kind: kind.to_owned(),
            });
        }
    }
    if plan.from == plan.to {
        return Err(CopyError::Same { side: "source" });
    }
    progress.step("opening the source (read-only)");
    let mut from = Conn::open(&plan.from, true)
        .await
        .map_err(|source| CopyError::Connect {
            side: "source",
            source,
        })?;
    check_source_migrations(&mut from, &mut components).await?;
    progress.step("opening the target");
    let mut to = target::Target::open(&plan.to, &components, progress).await?;
    let result = copy_all(&components, &mut from, &mut to, progress).await;
    from.close().await;
    match result {
        Ok(mut report) => {
            progress.step("committing the target");
            to.commit().await?;
            report.took = started.elapsed();
            Ok(report)
        }
        Err(e) => {
            to.abandon().await;
            Err(e)
        }
    }
}

async fn copy_all(
    components: &[Component],
    from: &mut Conn,
    to: &mut target::Target,
    progress: &mut dyn Progress,
) -> Result<Report, CopyError> {
    let tables: Vec<TableSpec> = order::parents_first(to.conn(), components)
        .await?
        .into_iter()
        .filter(|t| {
            components
                .iter()
                .any(|c| c.at_source && c.tables.iter().any(|ct| ct.name == t.name))
        })
        .collect();
    let before = snapshot::begin(from).await?;
    let mut report = Report::default();
    for spec in &tables {
        let rows = from
            .count(&spec.name)
            .await
            .map_err(sql("counting the source's rows"))?;
        progress.table(&spec.name, rows);
        let began = Instant::now();
        let mut done = |n| progress.advance(n);
        let source = table::copy(spec, from, rows, to.conn(), &mut done).await?;
        progress.table_done();
        report.tables.push(TableReport {
            name: spec.name.clone(),
            source,
            target: Tally::default(),
            took: began.elapsed(),
        });
    }
    snapshot::end(from, before).await?;
    to.after_rows(&tables).await?;
    progress.step("reading every table back from the target and comparing");
    for (spec, t) in tables.iter().zip(report.tables.iter_mut()) {
        t.target = table::tally(spec, to.conn())
            .await
            .map_err(sql("reading the target back"))?;
    }
    if report.ok() {
        Ok(report)
    } else {
        Err(CopyError::Mismatch(report.render()))
    }
}

/// The source must be at exactly this binary's migrations of every
/// component it has (other components, quotebot's, are not looked at); a
/// service it never ran is not copied.
async fn check_source_migrations(
    from: &mut Conn,
    components: &mut [Component],
) -> Result<(), CopyError> {
    let applied = applied(from).await?;
    for c in components.iter_mut() {
        let name = c.migrations.component;
        c.at_source = name == crate::schema::MIGRATIONS.component
            || applied.iter().any(|(component, _)| component == name);
    }
    let present: Vec<Component> = components
        .iter()
        .filter(|c| c.at_source)
        .map(|c| Component {
            migrations: c.migrations,
            tables: Vec::new(),
            at_source: true,
        })
        .collect();
    let wanted = wanted(&present);
    let ours: BTreeSet<_> = components.iter().map(|c| c.migrations.component).collect();
    let missing: Vec<String> = wanted
        .difference(&applied)
        .map(|(c, v)| format!("{c} {v:04}"))
        .collect();
    let unknown: Vec<String> = applied
        .difference(&wanted)
        .filter(|(c, _)| ours.contains(c.as_str()))
        .map(|(c, v)| format!("{c} {v:04}"))
        .collect();
    if !unknown.is_empty() {
        return Err(CopyError::SourceAhead(unknown.join(", ")));
    }
    if !missing.is_empty() {
        return Err(CopyError::SourceBehind(format!(
            "missing {}",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// `(component, version)` of every migration this binary has.
fn wanted(components: &[Component]) -> BTreeSet<(String, u32)> {
    components
        .iter()
        .flat_map(|c| {
            c.migrations
                .migrations
                .iter()
                .map(|m| (c.migrations.component.to_owned(), m.version))
        })
        .collect()
}

/// `(component, version)` of every migration `conn` records.
async fn applied(conn: &mut Conn) -> Result<BTreeSet<(String, u32)>, CopyError> {
    if !conn
        .has_table("keel_migrations")
        .await
        .map_err(sql("reading keel_migrations"))?
    {
        return Ok(BTreeSet::new());
    }
    let rows = conn
        .pairs("SELECT component, CAST(version AS TEXT) FROM keel_migrations")
        .await
        .map_err(sql("reading keel_migrations"))?;
    Ok(rows
        .into_iter()
        .filter_map(|(c, v)| Some((c, v.parse().ok()?)))
        .collect())
}

mod snapshot;
