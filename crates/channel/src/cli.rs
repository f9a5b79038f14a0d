//! `keel channel owner set --email <email> [--password-stdin]`: the
//! operator's way to create the owner or replace its credentials (every
//! session ends). Without `--password-stdin` a password is generated and
//! printed once.

use std::io::Read;

use clap::{FromArgMatches, Subcommand};
use keel_platform::Platform;
use keel_platform::config::{PlatformConfig, Source};

use crate::domain::owner;
use crate::domain::values::{Email, NewPassword};

#[derive(Debug, Subcommand)]
pub enum ChannelCommand {
    /// The channel's owner.
    #[command(subcommand)]
    Owner(OwnerCommand),
}

#[derive(Debug, Subcommand)]
pub enum OwnerCommand {
    /// Create the owner, or replace its email and password.
    Set {
        #[arg(long)]
        email: String,
        /// Read the password from standard input instead of generating one.
        #[arg(long)]
        password_stdin: bool,
    },
}

pub fn command() -> clap::Command {
    ChannelCommand::augment_subcommands(
        clap::Command::new("channel")
            .about("Administer the live channel: its owner.")
            .subcommand_required(true)
            .arg_required_else_help(true),
    )
}

pub async fn run(src: &Source, matches: &clap::ArgMatches) -> anyhow::Result<String> {
    let ChannelCommand::Owner(OwnerCommand::Set {
        email,
        password_stdin,
    }) = ChannelCommand::from_arg_matches(matches)?;
    let email = Email::parse(&email).map_err(|e| anyhow::anyhow!("--email {e}"))?;
    let (password, generated) = if password_stdin {
        let mut buf = String::new();
        std::io::stdin().read_to_string(&mut buf)?;
        (buf.trim_end_matches(['\r', '\n']).to_owned(), false)
    } else {
        (keel_platform::crypto::random_token(18), true)
    };
    let password = NewPassword::parse(password).map_err(|e| anyhow::anyhow!("the password {e}"))?;
    let shown = generated.then(|| password.clone().into_inner());
    let platform = Platform::connect(PlatformConfig::from_source(src)?).await?;
    platform.migrate(&[&crate::MIGRATIONS]).await?;
    let done = owner::set(&platform.db, &email, password).await;
    platform.db.clone().close().await;
    done?;
    Ok(match shown {
        Some(p) => format!("owner {} set; password (shown once): {p}", email.as_str()),
        None => format!("owner {} set", email.as_str()),
    })
}
