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
    /// The weekly goals mail.
    #[command(subcommand, name = "weekly-mail")]
    WeeklyMail(WeeklyMailCommand),
}

#[derive(Debug, Subcommand)]
pub enum WeeklyMailCommand {
    /// Queue this week's run now (a running `keel serve` sends it); a week
    /// already run mails nobody twice.
    Run,
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
            .about("Administer accounts: ban and unban users, run the weekly goals mail.")
            .subcommand_required(true)
            .arg_required_else_help(true),
    )
}

pub async fn run(src: &Source, matches: &clap::ArgMatches) -> anyhow::Result<String> {
    let cmd = match AccountsCommand::from_arg_matches(matches)? {
        AccountsCommand::User(cmd) => cmd,
        AccountsCommand::WeeklyMail(WeeklyMailCommand::Run) => return weekly_mail(src).await,
    };
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

async fn weekly_mail(src: &Source) -> anyhow::Result<String> {
    let platform = Platform::connect(PlatformConfig::from_source(src)?).await?;
    platform.migrate(&[&crate::MIGRATIONS]).await?;
    let now = chrono::Utc::now();
    let queued = crate::jobs::weekly_mail::WeeklyMail::enqueue(&platform.db, now).await;
    platform.db.clone().close().await;
    let week = crate::domain::weekly_mail::week_of(now);
    Ok(if queued? {
        format!("weekly goals mail of {week} queued")
    } else {
        format!("weekly goals mail of {week} was already queued")
    })
}
