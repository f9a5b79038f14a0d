//! `keel operator add | list | remove | disable | enable | password |
//! end-sessions | role`:
//! the console's operators, managed on the machine. Each change is in the
//! audit log as done by `cli`.

use clap::{FromArgMatches, Subcommand};
use keel_platform::Platform;
use keel_platform::audit::{self, Actor, Entry};
use keel_platform::config::{PlatformConfig, Source};
use keel_platform::console::Roles;
use serde_json::json;

use crate::domain::operators;

#[derive(Debug, Subcommand)]
pub enum OperatorCommand {
    /// Add an operator with roles (users, jobs, push, forms, operators);
    /// prints the password (unless read from standard input) and the TOTP
    /// secret to put in an authenticator app, once.
    Add {
        name: String,
        /// A role (repeat, or separate with commas).
        #[arg(long = "role")]
        roles: Vec<String>,
        /// Read the password from standard input instead of generating one.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Every operator, with roles and state.
    List,
    /// Remove an operator; its sessions end.
    Remove { name: String },
    /// Refuse an operator at sign-in (kept); its sessions end.
    Disable { name: String },
    /// Let a disabled operator in again.
    Enable { name: String },
    /// Set a new password (printed once, or read from standard input); the
    /// operator's sessions end.
    Password {
        name: String,
        #[arg(long)]
        password_stdin: bool,
    },
    /// End every session of an operator (they sign in again).
    EndSessions { name: String },
    /// Replace an operator's roles (none: `--role` not given).
    Role {
        name: String,
        #[arg(long = "role")]
        roles: Vec<String>,
    },
}

pub fn command() -> clap::Command {
    OperatorCommand::augment_subcommands(
        clap::Command::new("operator")
            .about("Manage the operator console's operators: add, list, remove, disable, enable, password, role.")
            .subcommand_required(true)
            .arg_required_else_help(true),
    )
}

fn password_from_stdin(asked: bool) -> anyhow::Result<Option<String>> {
    if !asked {
        return Ok(None);
    }
    use std::io::Read;
    let mut buf = String::new();
    std::io::stdin().read_to_string(&mut buf)?;
    Ok(Some(buf.trim_end_matches(['\r', '\n']).to_owned()).filter(|p| !p.is_empty()))
}

pub async fn run(src: &Source, matches: &clap::ArgMatches) -> anyhow::Result<String> {
    let cmd = OperatorCommand::from_arg_matches(matches)?;
    let platform = Platform::connect(PlatformConfig::from_source(src)?).await?;
    platform.migrate(&[&crate::MIGRATIONS]).await?;
    let done = act(&platform, cmd).await;
    platform.db.clone().close().await;
    done
}

async fn act(p: &Platform, cmd: OperatorCommand) -> anyhow::Result<String> {
    let db = &p.db;
    let (entry, out) = match cmd {
        OperatorCommand::Add {
            name,
            roles,
            password_stdin,
        } => {
            let roles = operators::roles(&roles)?;
            let given = password_from_stdin(password_stdin)?;
            let added = operators::add(db, &p.secrets, &name, &roles, given).await?;
            let mut out = format!(
                "operator {} added with roles: {}\nTOTP secret (put it in an authenticator app now; it is not shown again): {}\n{}",
                added.operator.name,
                shown(&roles),
                added.totp_base32,
                added.otpauth_url
            );
            if let Some(pw) = added.password {
                out.push_str(&format!("\npassword: {pw}"));
            }
            let entry = Entry::new(crate::NAME, "operator_added")
                .on(&added.operator.name)
                .change(None, Some(json!({ "roles": roles.names() })));
            (entry, out)
        }
        OperatorCommand::List => return list(p).await,
        OperatorCommand::Remove { name } => {
            let op = operators::remove(db, &name).await?;
            let entry = Entry::new(crate::NAME, "operator_removed").on(&op.name);
            (entry, format!("operator {} removed", op.name))
        }
        OperatorCommand::Disable { name } => {
            let op = operators::set_disabled(db, &name, true).await?;
            let entry = Entry::new(crate::NAME, "operator_disabled").on(&op.name);
            (
                entry,
                format!("operator {} disabled; its sessions ended", op.name),
            )
        }
        OperatorCommand::Enable { name } => {
            let op = operators::set_disabled(db, &name, false).await?;
            let entry = Entry::new(crate::NAME, "operator_enabled").on(&op.name);
            (entry, format!("operator {} enabled", op.name))
        }
        OperatorCommand::Password {
            name,
            password_stdin,
        } => {
            let given = password_from_stdin(password_stdin)?;
            let generated = operators::set_password(db, &name, given).await?;
            let entry = Entry::new(crate::NAME, "operator_password_set").on(&name);
            let out = match generated {
                Some(pw) => format!("password of {name} set; its sessions ended\npassword: {pw}"),
                None => format!("password of {name} set; its sessions ended"),
            };
            (entry, out)
        }
        OperatorCommand::EndSessions { name } => {
            let op = operators::find(db, &name)
                .await?
                .ok_or_else(|| operators::OperatorError::NotFound(name.clone()))?;
            let n = operators::end_sessions(db, op.id).await?;
            let entry = Entry::new(crate::NAME, "operator_sessions_ended")
                .on(&op.name)
                .detail(json!({ "sessions": n }));
            (entry, format!("{n} session(s) of {} ended", op.name))
        }
        OperatorCommand::Role { name, roles } => {
            let roles = operators::roles(&roles)?;
            let (before, op) = operators::set_roles(db, &name, &roles).await?;
            let entry = Entry::new(crate::NAME, "operator_roles_set")
                .on(&op.name)
                .change(
                    Some(json!({ "roles": before.names() })),
                    Some(json!({ "roles": roles.names() })),
                );
            (
                entry,
                format!("operator {} has roles: {}", op.name, shown(&roles)),
            )
        }
    };
    audit::record(db, &Actor::cli(), entry).await;
    Ok(out)
}

fn shown(roles: &Roles) -> String {
    let names = roles.names();
    if names.is_empty() {
        "none (health and the audit log only)".to_owned()
    } else {
        names.join(", ")
    }
}

async fn list(p: &Platform) -> anyhow::Result<String> {
    let all = operators::list(&p.db).await?;
    if all.is_empty() {
        return Ok("no operators (add one: keel operator add NAME --role users)".to_owned());
    }
    Ok(all
        .iter()
        .map(|o| {
            format!(
                "{}\troles: {}\t{}",
                o.name,
                shown(&Roles::from_stored(&o.roles)),
                if o.disabled_at.is_some() {
                    "disabled"
                } else {
                    "active"
                }
            )
        })
        .collect::<Vec<_>>()
        .join("\n"))
}
