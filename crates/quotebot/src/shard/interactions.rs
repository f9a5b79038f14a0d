//! Answers to the slash commands. Every answer is an interaction response
//! (ephemeral except `/quote`); bad input gets a sentence saying what is
//! wrong.

use std::time::Duration;

use chrono::Utc;
use twilight_model::application::interaction::application_command::{
    CommandData, CommandDataOption, CommandOptionValue,
};
use twilight_model::application::interaction::{Interaction, InteractionData};
use twilight_model::channel::message::{AllowedMentions, MessageFlags};
use twilight_model::guild::Permissions;
use twilight_model::http::interaction::{InteractionResponse, InteractionResponseType};
use twilight_util::builder::InteractionResponseDataBuilder;

use super::Bot;
use crate::domain::schedule::{Frequency, Plan, parse_time, parse_zone};
use crate::domain::suggestions::{self, Review};
use crate::domain::{guilds, quotes};

/// Per user, one `/quote` and one `/suggest` in this long (shared by
/// every shard through Redis).
const COOLDOWN: Duration = Duration::from_secs(10);

struct Answer {
    text: String,
    ephemeral: bool,
}

fn private(text: impl Into<String>) -> Answer {
    Answer {
        text: text.into(),
        ephemeral: true,
    }
}

fn option<'a>(opts: &'a [CommandDataOption], name: &str) -> Option<&'a CommandOptionValue> {
    opts.iter().find(|o| o.name == name).map(|o| &o.value)
}

fn string<'a>(opts: &'a [CommandDataOption], name: &str) -> Option<&'a str> {
    match option(opts, name) {
        Some(CommandOptionValue::String(s)) => Some(s.as_str()),
        _ => None,
    }
}

fn sub(data: &CommandData) -> Option<(&str, &[CommandDataOption])> {
    data.options.first().and_then(|o| match &o.value {
        CommandOptionValue::SubCommand(opts) => Some((o.name.as_str(), opts.as_slice())),
        _ => None,
    })
}

/// Handles one interaction; answers it.
pub async fn handle(bot: &Bot, i: Interaction) {
    let Some(InteractionData::ApplicationCommand(data)) = &i.data else {
        return;
    };
    let answer = match answer(bot, &i, data).await {
        Ok(a) => a,
        Err(e) => {
            tracing::error!(error = %e, command = data.name, "a command failed");
            private("Something went wrong on our side; try again in a moment.")
        }
    };
    // An interaction answer gets no client default: it pings nobody either.
    let mut builder = InteractionResponseDataBuilder::new()
        .content(answer.text)
        .allowed_mentions(AllowedMentions::default());
    if answer.ephemeral {
        builder = builder.flags(MessageFlags::EPHEMERAL);
    }
    let response = InteractionResponse {
        kind: InteractionResponseType::ChannelMessageWithSource,
        data: Some(builder.build()),
    };
    if let Err(e) = bot
        .http
        .interaction(i.application_id)
        .create_response(i.id, &i.token, &response)
        .await
    {
        tracing::warn!(error = %e, "could not answer an interaction");
    }
}

async fn cooling(bot: &Bot, what: &str, user: u64) -> bool {
    match bot
        .cache
        .claim(&format!("cooldown:{what}:{user}"), COOLDOWN)
        .await
    {
        Ok(claimed) => !claimed,
        Err(e) => {
            tracing::warn!(error = %e, "Redis: cooldown unknown; letting the command through");
            false
        }
    }
}

async fn answer(bot: &Bot, i: &Interaction, data: &CommandData) -> anyhow::Result<Answer> {
    let user = i.author_id().map_or(0, |u| u.get());
    match data.name.as_str() {
        "quote" => {
            if cooling(bot, "quote", user).await {
                return Ok(private("One quote at a time: try again in a few seconds."));
            }
            let scope = i
                .guild_id
                .map_or_else(|| format!("user:{user}"), |g| g.get().to_string());
            Ok(match quotes::pick(&bot.db, &bot.cache, &scope).await? {
                Some(q) => Answer {
                    text: q.message(),
                    ephemeral: false,
                },
                None => private("There are no quotes yet."),
            })
        }
        "suggest" => suggest(bot, user, &data.options).await,
        "setup" => setup(bot, i, data).await,
        "review" => review(bot, user, data).await,
        other => Ok(private(format!("Unknown command /{other}."))),
    }
}

async fn suggest(bot: &Bot, user: u64, opts: &[CommandDataOption]) -> anyhow::Result<Answer> {
    let quote = string(opts, "quote").unwrap_or_default().trim();
    let author = string(opts, "author").unwrap_or_default().trim();
    if quote.is_empty() || author.is_empty() {
        return Ok(private("Give both the quote and its author."));
    }
    if quote.chars().count() > suggestions::QUOTE_MAX
        || author.chars().count() > suggestions::AUTHOR_MAX
    {
        return Ok(private(
            "That is too long: at most 500 characters for the quote and 100 for the author.",
        ));
    }
    if cooling(bot, "suggest", user).await {
        return Ok(private(
            "One suggestion at a time: try again in a few seconds.",
        ));
    }
    let id = suggestions::suggest(&bot.db, quote, author, user).await?;
    announce(bot, &id, quote, author, user).await;
    Ok(private("Thank you! Your suggestion waits for review."))
}

/// Tells the owner's channel (`MAIN_CHANNEL_ID`) a suggestion waits; a
/// failure is logged (the suggestion is stored either way).
async fn announce(bot: &Bot, id: &str, quote: &str, author: &str, user: u64) {
    let Some(channel) = twilight_model::id::Id::new_checked(bot.cfg.main_channel_id) else {
        return;
    };
    let text = format!(
        "New suggestion `{id}` from <@{user}>: \"{quote}\" — {author}\nReview it with `/review approve id:{id}` or `/review reject id:{id}`."
    );
    let text: String = text.chars().take(2000).collect();
    if let Err(e) = bot.http.create_message(channel).content(&text).await {
        tracing::warn!(error = %e, "could not announce a suggestion in MAIN_CHANNEL_ID");
    }
}

fn may_manage(i: &Interaction) -> bool {
    i.member
        .as_ref()
        .and_then(|m| m.permissions)
        .is_some_and(|p| {
            p.contains(Permissions::MANAGE_GUILD) || p.contains(Permissions::ADMINISTRATOR)
        })
}

fn describe(g: &guilds::Guild) -> String {
    let Some(channel) = &g.channel_id else {
        return "No channel is set up yet: use `/setup channel`.".to_owned();
    };
    let Some(plan) = g.plan() else {
        return format!(
            "Quotes go to <#{channel}>, but the schedule is invalid: set it again with `/setup channel`."
        );
    };
    let when = match (plan.frequency, g.day) {
        (Frequency::Daily, _) => "every day".to_owned(),
        (Frequency::Weekly, Some(d)) => format!(
            "every {}",
            [
                "Sunday",
                "Monday",
                "Tuesday",
                "Wednesday",
                "Thursday",
                "Friday",
                "Saturday"
            ]
            .get(usize::try_from(d).unwrap_or(0))
            .unwrap_or(&"week")
        ),
        (Frequency::Monthly, Some(d)) => format!("on day {d} of every month"),
        _ => "regularly".to_owned(),
    };
    let next = plan
        .next_after(Utc::now())
        .map_or_else(String::new, |t| format!(" Next: <t:{}:F>.", t.timestamp()));
    format!(
        "Quotes go to <#{channel}> {when} at {} ({}).{next}",
        g.time, g.timezone
    )
}

async fn setup(bot: &Bot, i: &Interaction, data: &CommandData) -> anyhow::Result<Answer> {
    let Some(guild_id) = i.guild_id else {
        return Ok(private("Use this in a server."));
    };
    if !may_manage(i) {
        return Ok(private(
            "You need the Manage Server permission to set this up.",
        ));
    }
    match sub(data) {
        Some(("show", _)) => Ok(private(
            match guilds::find(&bot.db, guild_id.get()).await? {
                Some(g) => describe(&g),
                None => "No channel is set up yet: use `/setup channel`.".to_owned(),
            },
        )),
        Some(("channel", opts)) => {
            let Some(CommandOptionValue::Channel(channel)) = option(opts, "channel") else {
                return Ok(private("Choose a channel."));
            };
            let Some(frequency) = string(opts, "frequency").and_then(Frequency::parse) else {
                return Ok(private("The frequency is Daily, Weekly or Monthly."));
            };
            let time = string(opts, "time").unwrap_or_default();
            if parse_time(time).is_none() {
                return Ok(private(format!(
                    "\"{time}\" is not a time: use HH:MM, 00:00 to 23:59."
                )));
            }
            let timezone = string(opts, "timezone").unwrap_or("UTC").trim();
            let Some(tz) = parse_zone(timezone) else {
                return Ok(private(format!(
                    "\"{timezone}\" is not a time zone: use an IANA name such as Europe/Berlin."
                )));
            };
            let day = match option(opts, "day") {
                Some(CommandOptionValue::Integer(d)) => i32::try_from(*d).ok(),
                _ => None,
            };
            let day = if frequency == Frequency::Daily {
                None
            } else {
                day
            };
            if !Plan::valid_day(frequency, day) {
                return Ok(private(match frequency {
                    Frequency::Weekly => "A weekly quote needs a day: 0 (Sunday) to 6 (Saturday).",
                    _ => {
                        "A monthly quote needs a day of the month: 1 to 31 (short months use their last day)."
                    }
                }));
            }
            let g = guilds::set_up(
                &bot.db,
                &guilds::Setup {
                    guild_id: guild_id.get(),
                    channel_id: channel.get(),
                    frequency,
                    time: time.trim().to_owned(),
                    day,
                    timezone: tz.name().to_owned(),
                },
            )
            .await?;
            Ok(private(format!("Saved. {}", describe(&g))))
        }
        _ => Ok(private("Use `/setup channel` or `/setup show`.")),
    }
}

async fn review(bot: &Bot, user: u64, data: &CommandData) -> anyhow::Result<Answer> {
    if user != bot.cfg.owner_id {
        return Ok(private("Only the bot's owner reviews suggestions."));
    }
    match sub(data) {
        Some(("list", _)) => {
            let list = suggestions::pending(&bot.db, 10).await?;
            if list.is_empty() {
                return Ok(private("No suggestions wait for review."));
            }
            let lines: Vec<String> = list
                .iter()
                .map(|s| {
                    format!(
                        "`{}` \"{}\" — {} (from <@{}>)",
                        s.id, s.quote, s.author, s.added_by
                    )
                })
                .collect();
            Ok(private(
                lines.join("\n").chars().take(1900).collect::<String>(),
            ))
        }
        Some((verb @ ("approve" | "reject"), opts)) => {
            let id = string(opts, "id").unwrap_or_default().trim();
            Ok(private(
                match suggestions::review(&bot.db, id, verb == "approve", user).await? {
                    Review::Done if verb == "approve" => {
                        format!("Approved `{id}`: it is a quote now.")
                    }
                    Review::Done => format!("Rejected `{id}`."),
                    Review::Unknown => format!("No suggestion has the id `{id}`."),
                    Review::NotPending => format!("`{id}` was reviewed already."),
                },
            ))
        }
        _ => Ok(private(
            "Use `/review list`, `/review approve` or `/review reject`.",
        )),
    }
}
