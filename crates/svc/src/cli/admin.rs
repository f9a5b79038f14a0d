//! `keel svc admin add <username>`.

use clap::Subcommand;
use keel_platform::Platform;

use crate::domain::admin;

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

pub async fn run(p: &Platform, cmd: AdminCommand) -> anyhow::Result<String> {
    let AdminCommand::Add {
        username,
        no_capability,
        password_stdin,
    } = cmd;
    let given = if password_stdin {
        Some(super::stdin()?.trim_end_matches(['\r', '\n']).to_owned()).filter(|p| !p.is_empty())
    } else {
        None
    };
    let generated = given.is_none();
    let (u, password) = admin::add_user(&p.db, &username, given, !no_capability).await?;
    let caps = if u.capabilities.is_empty() {
        "no capabilities"
    } else {
        u.capabilities.as_str()
    };
    Ok(if generated {
        format!(
            "created {} ({caps}); login password (shown once): {password}",
            u.username
        )
    } else {
        format!("created {} ({caps})", u.username)
    })
}
