//! `keel accounts user ban|unban <login>`: the operator's ban. It takes
//! effect on every node at once (with Redis, the user's session-cache
//! epoch is bumped); a ban written straight in the database is seen within
//! the session cache time (docs/accounts.md).

use std::time::Duration;

use clap::{FromArgMatches, Subcommand};
use keel_platform::Platform;
use keel_platform::config::{PlatformConfig, Source};
use keel_platform::sea_orm::sea_query::Expr;

use crate::domain::users;
use crate::entity::user::Column;
use crate::identity::cache::SessionCache;

#[derive(Debug, Subcommand)]
pub enum AccountsCommand {
    /// Users.
    #[command(subcommand)]
    User(UserCommand),
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Ban a user (username or email): every request of theirs gets 403 ACCOUNT_BANNED.
    Ban { login: String },
    /// Lift a ban.
    Unban { login: String },
}

pub fn command() -> clap::Command {
    AccountsCommand::augment_subcommands(
        clap::Command::new(crate::NAME)
            .about("Administer accounts: ban and unban users.")
            .subcommand_required(true)
            .arg_required_else_help(true),
    )
}

pub async fn run(src: &Source, matches: &clap::ArgMatches) -> anyhow::Result<String> {
    let AccountsCommand::User(cmd) = AccountsCommand::from_arg_matches(matches)?;
    let (login, banned) = match cmd {
        UserCommand::Ban { login } => (login, true),
        UserCommand::Unban { login } => (login, false),
    };
    let platform = Platform::connect(PlatformConfig::from_source(src)?).await?;
    platform.migrate(&[&crate::MIGRATIONS]).await?;
    let done = set_banned(&platform, &login, banned).await;
    platform.db.clone().close().await;
    done
}

async fn set_banned(platform: &Platform, login: &str, banned: bool) -> anyhow::Result<String> {
    let db = &platform.db;
    let Some(u) = users::find_by_login(db.read(), login)
        .await
        .map_err(|e| anyhow::anyhow!("{e:?}"))?
    else {
        anyhow::bail!("no user has the username or email {login:?}");
    };
    users::update(&u.id)
        .col_expr(Column::IsBanned, Expr::value(banned))
        .exec(db.write())
        .await?;
    // Longer than any session cache time, so every node's entry is stale.
    let sessions = SessionCache::new(Duration::from_secs(86_400), Some(platform.cache.clone()));
    sessions.bump(&u.id).await;
    Ok(format!(
        "{} {}",
        u.username,
        if banned { "banned" } else { "unbanned" }
    ))
}
