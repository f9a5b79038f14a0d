//! The command line. Configuration comes from the environment (or
//! `keel.toml`); the README lists every variable.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

const CONFIG_HELP: &str = "\
Configuration is read from the environment, or from a flat keel.toml in the \
working directory (or the file named by KEEL_CONFIG_FILE) whose keys are the \
same variable names; the environment wins. Main variables:
  KEEL_DATA_DIR            data directory (default ./data)
  DATABASE_URL             postgres://... or sqlite://...; default SQLite at $KEEL_DATA_DIR/keel.db
  REDIS_URL                redis://...; default in-process cache and rate limits
  KEEL_<SERVICE>_ADDR      listen address of each service (port 0 picks a free port)
  KEEL_METRICS_ADDR        Prometheus /metrics listener (default 127.0.0.1:9100)
  SKIP_MIGRATIONS=true     do not migrate at start
  RUST_LOG, KEEL_LOG_FORMAT=json   logging
See README.md for every variable.";

#[derive(Debug, Parser)]
#[command(name = "keel", version, about = "The keel backend services in one binary.", after_long_help = CONFIG_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start HTTP services, each on its own listener (all of them when none is named).
    ///
    /// Applies pending migrations first unless SKIP_MIGRATIONS=true, prints each
    /// service's base URL, and shuts down gracefully on SIGTERM or SIGINT.
    #[command(after_long_help = CONFIG_HELP)]
    Serve {
        /// Services to start.
        #[arg(value_parser = service_names())]
        services: Vec<String>,
    },
    /// Apply pending migrations of the named services (all when none) and exit.
    #[command(after_long_help = CONFIG_HELP)]
    Migrate {
        /// Services whose migrations to apply.
        #[arg(value_parser = service_names())]
        services: Vec<String>,
    },
    /// Copy the SQLite database to a new file PATH, consistently, while keel
    /// serves and writes (SQLite's VACUUM INTO: one snapshot, every
    /// committed write before it began), check the copy, and print its
    /// size and the time taken.
    ///
    /// Restore: stop keel, put the copy in place of $KEEL_DATA_DIR/keel.db
    /// (removing keel.db-wal and keel.db-shm), start keel. On PostgreSQL
    /// this says how to use pg_dump instead. Keys in $KEEL_DATA_DIR
    /// (secret.key, accounts-jwt.key) are not in the database: back them up
    /// too.
    #[command(after_long_help = CONFIG_HELP)]
    Backup {
        /// The new file to write (it must not exist).
        path: std::path::PathBuf,
    },
    /// Bring the SQLite database back from its continuous replica
    /// (KEEL_REPLICA_URL, written by Litestream beside `keel serve`): the
    /// newest state, or the state at --at. The restore is checked (a full
    /// integrity check) and then put at --to (default: the configured
    /// database), which must not exist unless --force says to replace it:
    /// stop keel first. Prints the last transaction restored and when it
    /// was written.
    #[command(after_long_help = CONFIG_HELP)]
    Restore {
        /// The replica (default: $KEEL_REPLICA_URL): s3://bucket/path?...
        /// or file:///a/directory.
        #[arg(long)]
        from: Option<String>,
        /// The state at this time (RFC 3339, e.g. 2026-11-29T03:00:00Z).
        #[arg(long)]
        at: Option<String>,
        /// Where to write it (default: the configured database file).
        #[arg(long)]
        to: Option<std::path::PathBuf>,
        /// Replace a database that is there (stop keel first).
        #[arg(long)]
        force: bool,
    },
    /// The database: copy every record of keel's to another database.
    #[command(subcommand)]
    Db(DbCommand),
    /// Exit 0 when a GET of URL (default: this container's keel listener)
    /// answers 2xx within 3 seconds, else 1: the container health check,
    /// so the image needs no curl or shell.
    Probe {
        /// The URL to check. Default: any keel listener of this container:
        /// quotebot's /api/health/live on $PORT (default 3000), else an HTTP
        /// service's /healthz at its KEEL_*_ADDR.
        url: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Copy every table of every HTTP service and of the platform from one
    /// database to another (SQLite to PostgreSQL, or back), then read every
    /// table back from the target and compare it with the source, row by
    /// row; print the comparison.
    ///
    /// Stop every keel process using the source first. The source must be
    /// at this keel's migrations (run `keel migrate` first); the target is
    /// migrated, must hold no row of keel's, and is written in one
    /// transaction (PostgreSQL) or into a new file renamed into place
    /// (SQLite): a copy that stops half-way leaves nothing to undo; run it
    /// again. The target's deployment needs the same KEEL_SECRET_KEY and
    /// KEEL_ACCOUNTS_JWT_SECRET: the command says where they are.
    #[command(after_long_help = CONFIG_HELP)]
    Copy {
        /// The source: sqlite://PATH or postgres://... (default:
        /// KEEL_COPY_FROM, else the configured database, DATABASE_URL or
        /// $KEEL_DATA_DIR/keel.db).
        #[arg(long)]
        from: Option<String>,
        /// The target: sqlite://PATH or postgres://... (default:
        /// KEEL_COPY_TO, or the file KEEL_COPY_TO_FILE names: a password
        /// on the command line is visible to every user in `ps`).
        #[arg(long)]
        to: Option<String>,
    },
}

fn service_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(crate::services::http_names())
}

/// The whole command line: `serve`, `migrate`, and each service's own
/// subcommand (`keel svc ...`).
pub fn command() -> clap::Command {
    crate::services::COMMANDS
        .iter()
        .map(|c| (c.command)())
        .fold(Cli::command(), clap::Command::subcommand)
}

/// What the command line asks for.
pub enum Invocation {
    Builtin(Command),
    /// A service's subcommand, with its matches.
    Service(&'static keel_platform::service::Command, clap::ArgMatches),
}

/// Parses the process's arguments (exits with usage on an error).
pub fn parse() -> Invocation {
    let matches = command().get_matches();
    if let Some((name, sub)) = matches.subcommand()
        && let Some(service) = crate::services::command(name)
    {
        return Invocation::Service(service, sub.clone());
    }
    match Cli::from_arg_matches(&matches) {
        Ok(cli) => Invocation::Builtin(cli.command),
        Err(e) => e.exit(),
    }
}
