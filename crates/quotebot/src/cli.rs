//! `keel quotebot ...`: the bot (no subcommand), `migrate`, the
//! maintenance commands under `db`, and the hidden `shard` the manager
//! spawns. Configuration comes from the environment only.

use clap::{Arg, ArgAction, ArgMatches, Command};
use keel_platform::config::Source;

use crate::config::{Config, DbConfig, snowflake};
use crate::{baseline, db, manager, reconcile, shard};

pub fn command() -> Command {
    Command::new(crate::NAME)
        .about("The scheduled-quote chat bot: runs it (no subcommand), migrates, maintains its database.")
        .long_about(
            "Without a subcommand: migrates (unless SKIP_MIGRATIONS=true), serves /api/health \
             on PORT, and runs one shard process per shard, supervised. Environment only \
             (no keel.toml): DATABASE_URL, REDIS_URL, CHAT_APPLICATION_BOT_TOKEN, OWNER_ID, \
             MAIN_CHANNEL_ID, PORT (3000), HOST (all interfaces), SKIP_MIGRATIONS. See docs/quotebot.md.",
        )
        .args_conflicts_with_subcommands(true)
        .subcommand(Command::new("migrate").about("Apply quotebot's pending migrations and exit"))
        .subcommand(
            Command::new("db")
                .about("Maintenance of quotebot's database")
                .subcommand_required(true)
                .subcommand(Command::new("seed").about(
                    "Load the starter quotes (needs only DATABASE_URL and OWNER_ID); skips quotes that exist",
                ))
                .subcommand(Command::new("baseline").about(
                    "Record migration 0000 as applied, only if the schema is exactly 0000",
                ))
                .subcommand(
                    Command::new("reconcile")
                        .about("Rebuild a legacy schema to the current shape, keeping every row (prints a checklist without --confirm)")
                        .arg(Arg::new("confirm").long("confirm").action(ArgAction::SetTrue).help("Do it")),
                ),
        )
        .subcommand(
            Command::new("shard")
                .hide(true)
                .about("One shard (started by the manager)")
                .arg(Arg::new("id").long("id").required(true).value_parser(clap::value_parser!(u32)))
                .arg(Arg::new("total").long("total").required(true).value_parser(clap::value_parser!(u32))),
        )
}

pub async fn run(_src: &Source, m: &ArgMatches) -> anyhow::Result<String> {
    // The deployment reads no configuration file: the environment only.
    let src = Source::environment()?;
    match m.subcommand() {
        None => {
            manager::run(Config::from_source(&src)?).await?;
            Ok("quotebot stopped".to_owned())
        }
        Some(("migrate", _)) => {
            let cfg = DbConfig::from_source(&src)?;
            let conn = db::connect(&cfg).await?;
            let applied = db::migrate(&conn, &cfg).await?;
            Ok(if applied.is_empty() {
                "nothing to migrate".to_owned()
            } else {
                applied
                    .iter()
                    .map(|a| format!("applied {} {:04} {}", a.component, a.version, a.name))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        }
        Some(("db", sub)) => {
            let cfg = DbConfig::from_source(&src)?;
            match sub.subcommand() {
                Some(("seed", _)) => {
                    let owner = snowflake(&src, "OWNER_ID")?;
                    let conn = db::connect(&cfg).await?;
                    let added = db::seed(&conn, owner).await?;
                    Ok(format!(
                        "seeded {added} quotes ({} already present)",
                        crate::starter_quotes::STARTER.len() - added
                    ))
                }
                Some(("baseline", _)) => baseline::run(&db::connect(&cfg).await?).await,
                Some(("reconcile", r)) => {
                    reconcile::run(&db::connect(&cfg).await?, r.get_flag("confirm")).await
                }
                _ => anyhow::bail!("unknown db command"),
            }
        }
        Some(("shard", s)) => {
            let id = s.get_one::<u32>("id").copied().unwrap_or_default();
            let total = s.get_one::<u32>("total").copied().unwrap_or(1);
            shard::run(Config::from_source(&src)?, id, total).await?;
            Ok(String::new())
        }
        Some((other, _)) => anyhow::bail!("unknown command {other}"),
    }
}
