//! `keel svc ...`: the host site's administration from the command line,
//! one file per subcommand.

mod admin;
mod app_password;
mod form;
mod settings;

use clap::{FromArgMatches, Subcommand};
use keel_platform::Platform;
use keel_platform::config::{PlatformConfig, Source};

#[derive(Debug, Subcommand)]
pub enum SvcCommand {
    /// Site settings (allowed origins, forms allow-list, push switch, App Check, limits).
    #[command(subcommand)]
    Settings(settings::SettingsCommand),
    /// Host-site users.
    #[command(subcommand)]
    Admin(admin::AdminCommand),
    /// Application passwords (HTTP Basic for the admin routes).
    #[command(subcommand, name = "app-password")]
    AppPassword(app_password::AppPasswordCommand),
    /// Form definitions.
    #[command(subcommand)]
    Form(form::FormCommand),
}

/// The `svc` subcommand, for the binary's command line.
pub fn command() -> clap::Command {
    SvcCommand::augment_subcommands(
        clap::Command::new(crate::NAME)
            .about("Administer the svc host site: settings, admins, application passwords, forms.")
            .subcommand_required(true)
            .arg_required_else_help(true),
    )
}

/// Runs the parsed subcommand against the configured database (migrated
/// first); what to print.
pub async fn run(src: &Source, matches: &clap::ArgMatches) -> anyhow::Result<String> {
    let cmd = SvcCommand::from_arg_matches(matches)?;
    let platform = Platform::connect(PlatformConfig::from_source(src)?).await?;
    platform.migrate(&[&crate::MIGRATIONS]).await?;
    let out = match cmd {
        SvcCommand::Settings(c) => settings::run(&platform, c).await,
        SvcCommand::Admin(c) => admin::run(&platform, c).await,
        SvcCommand::AppPassword(c) => app_password::run(&platform, c).await,
        SvcCommand::Form(c) => form::run(&platform, c).await,
    };
    platform.db.clone().close().await;
    out
}

fn json(v: &impl serde::Serialize) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(v)?)
}

/// Standard input, whole.
fn stdin() -> anyhow::Result<String> {
    use std::io::Read;
    let mut buf = String::new();
    std::io::stdin().read_to_string(&mut buf)?;
    Ok(buf)
}
