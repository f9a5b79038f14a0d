//! The target: checked (no migration this keel does not know, no row of
//! keel's), migrated to this keel's schema, then written in one
//! transaction. PostgreSQL: the transaction is the database's own, rolled
//! back if the copy stops. SQLite: a new file beside the target
//! (`<target>.copying`), renamed onto it once verified; a file left by a
//! copy that was killed is removed by the next run.

use std::path::{Path, PathBuf};

use futures::TryStreamExt;

use super::cell::Cell;
use super::conn::Conn;
use super::{Component, CopyError, Progress, applied, sql, wanted};
use crate::config::{PlatformConfig, Source};
use crate::db::Db;
use crate::migrate::spec::{TableSpec, quote};

// The names of the variables read here.
const DATABASE_URL: &str = "DATABASE_URL";
const DATA_DIR: &str = "KEEL_DATA_DIR";
const DB_MAX_CONNECTIONS: &str = "KEEL_DB_MAX_CONNECTIONS";
const PG_SHORT_READS: &str = "KEEL_PG_SHORT_READS";
const SQLITE_INLINE_READS: &str = "KEEL_SQLITE_INLINE_READS";

pub struct Target {
    conn: Conn,
    /// SQLite: the file being written and the target's path.
    file: Option<(PathBuf, PathBuf)>,
}

/// What a fresh migration leaves in each table that it fills, the
/// timestamps left out (they are the moment it ran).
type Seeds = Vec<(String, Vec<Vec<Cell>>)>;

impl Target {
    pub async fn open(
        url: &str,
        components: &[Component],
        progress: &mut dyn Progress,
    ) -> Result<Self, CopyError> {
        let connect = |source| CopyError::Connect {
            side: "target",
            source,
        };
        let seeds = seeds(components).await?;
        let (write_url, file) = match sqlite_path(url) {
            None => {
                let mut conn = Conn::open(url, false).await.map_err(connect)?;
                check(&mut conn, components, &seeds).await?;
                conn.close().await;
                (url.to_owned(), None)
            }
            Some(path) => {
                if path.exists() {
                    let mut conn = Conn::open(url, true).await.map_err(connect)?;
                    check(&mut conn, components, &seeds).await?;
                    conn.close().await;
                }
                let copying = PathBuf::from(format!("{}.copying", path.display()));
                remove_file(&copying)?;
                for side in ["-wal", "-shm", "-journal"] {
                    remove_file(Path::new(&format!("{}{side}", copying.display())))?;
                }
                (
                    format!("sqlite://{}?mode=rwc", copying.display()),
                    Some((copying, path)),
                )
            }
        };
        progress.step("migrating the target to this keel's schema");
        migrate(&write_url, components).await?;
        let mut conn = Conn::open(&write_url, false).await.map_err(connect)?;
        if file.is_some() {
            // A new file nobody reads until it is renamed: no journal, no
            // syncs until the end.
            conn.exec("PRAGMA journal_mode = OFF")
                .await
                .map_err(sql("preparing the target file"))?;
            conn.exec("PRAGMA synchronous = OFF")
                .await
                .map_err(sql("preparing the target file"))?;
        }
        conn.exec("BEGIN")
            .await
            .map_err(sql("starting the target's transaction"))?;
        // What a fresh migration filled (channel's defaults) makes way, in
        // the copy's transaction, for the source's rows.
        for (table, _) in &seeds {
            conn.exec(&format!("DELETE FROM {}", quote(table)))
                .await
                .map_err(sql("emptying the tables the migrations filled"))?;
        }
        Ok(Self { conn, file })
    }

    pub fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }

    /// PostgreSQL: every sequence continues after the copied rows.
    pub async fn after_rows(&mut self, tables: &[TableSpec]) -> Result<(), CopyError> {
        if !self.conn.is_postgres() {
            return Ok(());
        }
        let serial = self
            .conn
            .pairs(
                "SELECT table_name::text, column_name::text FROM information_schema.columns \
                 WHERE table_schema = current_schema() \
                 AND (column_default LIKE 'nextval(%' OR is_identity = 'YES')",
            )
            .await
            .map_err(sql("reading the target's sequences"))?;
        for (table, column) in serial {
            if !tables.iter().any(|t| t.name == table) {
                continue;
            }
            let (t, c) = (quote(&table), quote(&column));
            self.conn
                .exec(&format!(
                    "SELECT setval(pg_get_serial_sequence('{}', '{}'), \
                     COALESCE((SELECT MAX({c}) FROM {t}), 0) + 1, false)",
                    t.replace('\'', "''"),
                    column.replace('\'', "''"),
                ))
                .await
                .map_err(sql("moving the target's sequences past the copied rows"))?;
        }
        Ok(())
    }

    pub async fn commit(mut self) -> Result<(), CopyError> {
        self.conn
            .exec("COMMIT")
            .await
            .map_err(sql("committing the target"))?;
        let Some((copying, path)) = self.file.take() else {
            self.conn.close().await;
            return Ok(());
        };
        // As keel runs it, and on disk before it takes the target's name.
        self.conn
            .exec("PRAGMA journal_mode = WAL")
            .await
            .map_err(sql("finishing the target file"))?;
        self.conn.close().await;
        let io = |what: &str| {
            let what = what.to_owned();
            move |source| CopyError::Io { what, source }
        };
        std::fs::File::open(&copying)
            .and_then(|f| f.sync_all())
            .map_err(io("syncing the target file"))?;
        std::fs::rename(&copying, &path).map_err(io("renaming the target file into place"))?;
        if let Some(dir) = path.parent() {
            // The rename itself, on disk (a directory cannot be synced on
            // every system; the data is).
            let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    }

    /// Leaves nothing but the target's migrations.
    pub async fn abandon(mut self) {
        if let Err(e) = self.conn.exec("ROLLBACK").await {
            tracing::debug!(error = %e, "rolling the target back");
        }
        self.conn.close().await;
        if let Some((copying, _)) = self.file.take()
            && let Err(e) = std::fs::remove_file(&copying)
        {
            tracing::warn!(error = %e, file = %copying.display(), "removing the unfinished target file");
        }
    }
}

/// The file of a `sqlite:` URL.
pub fn sqlite_path(url: &str) -> Option<PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    Some(PathBuf::from(path))
}

fn remove_file(path: &Path) -> Result<(), CopyError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(CopyError::Io {
            what: format!("removing {}", path.display()),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// No migration this keel does not know, and no row in any table but
/// what a fresh migration leaves.
async fn check(conn: &mut Conn, components: &[Component], seeds: &Seeds) -> Result<(), CopyError> {
    let ours: Vec<&str> = components.iter().map(|c| c.migrations.component).collect();
    let unknown: Vec<String> = applied(conn)
        .await?
        .difference(&wanted(components))
        .filter(|(c, _)| ours.contains(&c.as_str()))
        .map(|(c, v)| format!("{c} {v:04}"))
        .collect();
    if !unknown.is_empty() {
        return Err(CopyError::TargetAhead(unknown.join(", ")));
    }
    for t in components.iter().flat_map(|c| &c.tables) {
        if !conn
            .has_table(&t.name)
            .await
            .map_err(sql("looking at the target's tables"))?
        {
            continue;
        }
        let rows = conn
            .count(&t.name)
            .await
            .map_err(sql("counting the target's rows"))?;
        if rows == 0 {
            continue;
        }
        let seed = seeds
            .iter()
            .find(|(name, _)| *name == t.name)
            .map(|(_, rows)| rows);
        if let Some(seed) = seed
            && *seed == timeless(conn, t).await?
        {
            continue;
        }
        return Err(CopyError::TargetNotEmpty {
            table: t.name.clone(),
            rows,
        });
    }
    Ok(())
}

/// Every row of `t` in `conn`, its timestamps left out.
async fn timeless(conn: &mut Conn, t: &TableSpec) -> Result<Vec<Vec<Cell>>, CopyError> {
    let select = t.select_sql();
    let rows: Vec<Vec<Cell>> = conn
        .rows(t, &select)
        .try_collect()
        .await
        .map_err(sql("reading the target's rows"))?;
    Ok(rows
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|c| {
                    if matches!(c, Cell::Time(_)) {
                        Cell::Null
                    } else {
                        c
                    }
                })
                .collect()
        })
        .collect())
}

/// The rows a fresh migration leaves, found by migrating a scratch SQLite
/// file (the statements are the same on both backends).
async fn seeds(components: &[Component]) -> Result<Seeds, CopyError> {
    let scratch = std::env::temp_dir().join(format!(
        "keel-db-copy-seeds-{}-{}.db",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let url = format!("sqlite://{}?mode=rwc", scratch.display());
    let found = async {
        migrate(&url, components).await?;
        let mut conn = Conn::open(&url, true)
            .await
            .map_err(|source| CopyError::Connect {
                side: "scratch",
                source,
            })?;
        let mut seeds = Vec::new();
        for t in components.iter().flat_map(|c| &c.tables) {
            let rows = timeless(&mut conn, t).await?;
            if !rows.is_empty() {
                seeds.push((t.name.clone(), rows));
            }
        }
        conn.close().await;
        Ok(seeds)
    }
    .await;
    for side in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{side}", scratch.display()));
    }
    found
}

/// Applies this keel's migrations to the database at `url`.
async fn migrate(url: &str, components: &[Component]) -> Result<(), CopyError> {
    let src = Source::from_pairs([
        (DATABASE_URL, url.to_owned()),
        (DATA_DIR, std::env::temp_dir().display().to_string()),
        (DB_MAX_CONNECTIONS, "1".to_owned()),
        (SQLITE_INLINE_READS, "false".to_owned()),
        (PG_SHORT_READS, "false".to_owned()),
    ]);
    let cfg = PlatformConfig::from_source(&src).map_err(|e| CopyError::Io {
        what: "the target's settings".to_owned(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let db = Db::connect(&cfg.database)
        .await
        .map_err(|e| CopyError::Io {
            what: "connecting to the target to migrate it".to_owned(),
            source: std::io::Error::other(e.to_string()),
        })?;
    let sets: Vec<&crate::migrate::MigrationSet> =
        components.iter().map(|c| c.migrations).collect();
    let migrated = crate::migrate::run(&db, &cfg.migrations, &sets).await;
    db.close().await;
    migrated?;
    Ok(())
}
