//! `keel svc admin add | remove | disable | enable | password | end-sessions
//! | grant | revoke | list`. Each change is recorded in the audit log as
//! done by `cli`.

use clap::Subcommand;
use keel_platform::Platform;
use keel_platform::audit::{self, Actor, Entry};
use serde_json::json;

use crate::domain::{admin, admins};

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create a user holding svc_manage; prints its login password once.
    Add {
        username: String,
        /// Create the user without svc_manage.
        #[arg(long)]
        no_capability: bool,
        /// Also let the user manage the other users (svc_manage_admins).
        #[arg(long)]
        manage_admins: bool,
        /// Read the login password from standard input instead of generating one.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Every user, with its capabilities, state and ways in.
    List,
    /// Remove a user, its sessions and application passwords.
    Remove { username: String },
    /// Refuse a user at every door (kept; sessions and application passwords end).
    Disable { username: String },
    /// Let a disabled user in again.
    Enable { username: String },
    /// Set a new login password (printed once, or read from standard input); the user's sessions end.
    Password {
        username: String,
        #[arg(long)]
        password_stdin: bool,
    },
    /// End every cookie session of a user and revoke its application passwords.
    EndSessions { username: String },
    /// Grant a capability (svc_manage, svc_manage_admins).
    Grant {
        username: String,
        capability: String,
    },
    /// Revoke a capability.
    Revoke {
        username: String,
        capability: String,
    },
}

fn password_from_stdin(asked: bool) -> anyhow::Result<Option<String>> {
    if !asked {
        return Ok(None);
    }
    Ok(Some(super::stdin()?.trim_end_matches(['\r', '\n']).to_owned()).filter(|p| !p.is_empty()))
}

pub async fn run(p: &Platform, cmd: AdminCommand) -> anyhow::Result<String> {
    let db = &p.db;
    let (entry, out) = match cmd {
        AdminCommand::Add {
            username,
            no_capability,
            manage_admins,
            password_stdin,
        } => {
            let given = password_from_stdin(password_stdin)?;
            let generated = given.is_none();
            let (u, password) = admin::add_user(db, &username, given, !no_capability).await?;
            if manage_admins {
                admins::set_capability(db, &u.username, admins::MANAGE_ADMINS, true).await?;
            }
            let caps = admins::list(db)
                .await?
                .into_iter()
                .find(|a| a.id == u.id)
                .map(|a| a.capabilities)
                .unwrap_or_default();
            let shown = if caps.is_empty() {
                "no capabilities".to_owned()
            } else {
                caps.join(" ")
            };
            let out = if generated {
                format!(
                    "created {} ({shown}); login password (shown once): {password}",
                    u.username
                )
            } else {
                format!("created {} ({shown})", u.username)
            };
            (
                Entry::new(crate::NAME, "svc_admin_added")
                    .on(&u.username)
                    .change(None, Some(json!({"capabilities": caps}))),
                out,
            )
        }
        AdminCommand::List => {
            let all = admins::list(db).await?;
            return Ok(all
                .iter()
                .map(|a| {
                    format!(
                        "{}\t{}\t{}\t{} sessions\t{} application passwords",
                        a.username,
                        if a.capabilities.is_empty() {
                            "-".to_owned()
                        } else {
                            a.capabilities.join(" ")
                        },
                        if a.disabled { "disabled" } else { "enabled" },
                        a.sessions,
                        a.app_passwords
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"));
        }
        AdminCommand::Remove { username } => {
            let u = admins::remove(db, &username).await?;
            (
                Entry::new(crate::NAME, "svc_admin_removed").on(&u.username),
                format!("removed {}", u.username),
            )
        }
        AdminCommand::Disable { username } => disable(db, &username, true).await?,
        AdminCommand::Enable { username } => disable(db, &username, false).await?,
        AdminCommand::Password {
            username,
            password_stdin,
        } => {
            let given = password_from_stdin(password_stdin)?;
            let generated = given.is_none();
            let (password, sessions) = admins::set_password(db, &username, given).await?;
            let out = if generated {
                format!(
                    "new login password for {username} (shown once): {password}; {sessions} sessions ended"
                )
            } else {
                format!("login password of {username} set; {sessions} sessions ended")
            };
            (
                Entry::new(crate::NAME, "svc_admin_password_set")
                    .on(&username)
                    .detail(json!({"sessions_ended": sessions})),
                out,
            )
        }
        AdminCommand::EndSessions { username } => {
            let ended = admins::end_sessions(db, &username).await?;
            (
                Entry::new(crate::NAME, "svc_admin_sessions_ended")
                    .on(&username)
                    .detail(json!(ended)),
                format!(
                    "{username}: {} sessions ended, {} application passwords revoked",
                    ended.sessions, ended.app_passwords
                ),
            )
        }
        AdminCommand::Grant {
            username,
            capability,
        } => capability_change(db, &username, &capability, true).await?,
        AdminCommand::Revoke {
            username,
            capability,
        } => capability_change(db, &username, &capability, false).await?,
    };
    audit::record(db, &Actor::cli(), entry).await;
    Ok(out)
}

async fn disable(
    db: &keel_platform::db::Db,
    username: &str,
    disabled: bool,
) -> anyhow::Result<(Entry, String)> {
    let (was, ended) = admins::set_disabled(db, username, disabled).await?;
    let action = if disabled {
        "svc_admin_disabled"
    } else {
        "svc_admin_enabled"
    };
    let entry = Entry::new(crate::NAME, action)
        .on(username)
        .change(
            Some(json!({"disabled": was})),
            Some(json!({"disabled": disabled})),
        )
        .detail(json!(ended));
    let out = if disabled {
        format!(
            "disabled {username}: {} sessions ended, {} application passwords revoked",
            ended.sessions, ended.app_passwords
        )
    } else {
        format!("enabled {username}")
    };
    Ok((entry, out))
}

async fn capability_change(
    db: &keel_platform::db::Db,
    username: &str,
    capability: &str,
    grant: bool,
) -> anyhow::Result<(Entry, String)> {
    let (before, after) = admins::set_capability(db, username, capability, grant).await?;
    let entry = Entry::new(crate::NAME, "svc_admin_capabilities_changed")
        .on(username)
        .change(
            Some(json!({"capabilities": before})),
            Some(json!({"capabilities": after})),
        );
    Ok((
        entry,
        format!(
            "{username}: {}",
            if after.is_empty() {
                "no capabilities".to_owned()
            } else {
                after.join(" ")
            }
        ),
    ))
}
