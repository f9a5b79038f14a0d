//! `keel svc app-password add | revoke | list`.

use clap::Subcommand;
use keel_platform::Platform;
use keel_platform::audit::{self, Actor, Entry};
use serde_json::json;

use crate::domain::admin;

#[derive(Debug, Subcommand)]
pub enum AppPasswordCommand {
    /// Create an application password; prints it once (24 characters in groups of four).
    Add { username: String, name: String },
    /// Delete an application password.
    Revoke { username: String, name: String },
    /// List a user's application passwords (names and dates only).
    List { username: String },
}

pub async fn run(p: &Platform, cmd: AppPasswordCommand) -> anyhow::Result<String> {
    let db = &p.db;
    match cmd {
        AppPasswordCommand::Add { username, name } => {
            let shown = admin::add_app_password(db, &username, &name).await?;
            let entry = Entry::new(crate::NAME, "svc_app_password_created")
                .on(&username)
                .detail(json!({"name": name}));
            audit::record(db, &Actor::cli(), entry).await;
            Ok(format!(
                "application password {name:?} for {username} (shown once): {shown}"
            ))
        }
        AppPasswordCommand::Revoke { username, name } => {
            if admin::revoke_app_password(db, &username, &name).await? {
                let entry = Entry::new(crate::NAME, "svc_app_password_revoked")
                    .on(&username)
                    .detail(json!({"name": name}));
                audit::record(db, &Actor::cli(), entry).await;
                Ok(format!("revoked {name:?} of {username}"))
            } else {
                anyhow::bail!("{username} has no application password named {name:?}")
            }
        }
        AppPasswordCommand::List { username } => Ok(admin::list_app_passwords(db, &username)
            .await?
            .into_iter()
            .map(|(name, at)| format!("{name}\t{}", keel_platform::time::iso_millis(&at)))
            .collect::<Vec<_>>()
            .join("\n")),
    }
}
