//! The command line. Configuration comes from the environment (or
//! `keel.toml`); the README lists every variable.

use clap::{Parser, Subcommand};

use crate::ServiceName;

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
        /// Services to start: accounts, usage-alerts, svc, channel-web, channel-api.
        #[arg(value_enum)]
        services: Vec<ServiceName>,
    },
    /// Apply pending migrations of the named services (all when none) and exit.
    #[command(after_long_help = CONFIG_HELP)]
    Migrate {
        /// Services whose migrations to apply.
        #[arg(value_enum)]
        services: Vec<ServiceName>,
    },
    /// Administer the svc host site: settings, admins, application passwords, forms.
    #[command(subcommand)]
    Svc(SvcCommand),
}

#[derive(Debug, Subcommand)]
pub enum SvcCommand {
    /// Site settings (allowed origins, forms allow-list, push switch, App Check, limits).
    #[command(subcommand)]
    Settings(SettingsCommand),
    /// Host-site users.
    #[command(subcommand)]
    Admin(AdminCommand),
    /// Application passwords (HTTP Basic for the admin routes).
    #[command(subcommand, name = "app-password")]
    AppPassword(AppPasswordCommand),
    /// Form definitions.
    #[command(subcommand)]
    Form(FormCommand),
}

#[derive(Debug, Subcommand)]
pub enum SettingsCommand {
    /// Print the settings as JSON.
    Show,
    /// Set one setting; lists are comma-separated. Keys: allowed_origins,
    /// forms_allowlist, push_enabled, appcheck_project_number,
    /// appcheck_app_ids, appcheck_debug_tokens, submission_rate_limit,
    /// payload_limit_bytes.
    Set {
        key: String,
        /// The value (an empty string clears a list).
        value: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create a user holding svc_manage; prints its login password once.
    Add {
        username: String,
        /// Create the user without svc_manage.
        #[arg(long)]
        no_capability: bool,
        /// Read the login password from standard input instead of generating one.
        #[arg(long)]
        password_stdin: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum AppPasswordCommand {
    /// Create an application password; prints it once (24 characters in groups of four).
    Add { username: String, name: String },
    /// Delete an application password.
    Revoke { username: String, name: String },
    /// List a user's application passwords (names and dates only).
    List { username: String },
}

#[derive(Debug, Subcommand)]
pub enum FormCommand {
    /// List the forms as JSON.
    List,
    /// Print one form as JSON.
    Show { id: String },
    /// Create or replace a form from a JSON file (`-` reads standard input):
    /// {"id": "12", "title": "...", "fields": [{"id", "label", "type", "required", "choices", "max_length"}]}
    Put { file: String },
    /// Delete a form and its submissions.
    Remove { id: String },
}
