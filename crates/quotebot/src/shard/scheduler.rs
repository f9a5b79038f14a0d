//! The scheduled quotes of this shard's guilds: each tick, every guild
//! whose latest due time has passed and is still owed gets it claimed
//! (a conditional update of `lastMotivationSentAt`, so two processes or a
//! restart never double-post, and a restart after a missed time posts
//! once), then posted. A channel the bot can no longer post to (403, 404)
//! is logged and skipped until the next period; other failures give the
//! claim back for the next tick.

use chrono::Utc;
use keel_platform::observe::trace as spans;
use tracing::Instrument;
use twilight_http::error::ErrorType;
use twilight_model::id::Id;

use super::Bot;
use crate::domain::{guilds, quotes};

pub async fn tick(bot: &Bot) {
    let due = match guilds::scheduled(&bot.db, bot.shard, bot.total).await {
        Ok(list) => list,
        Err(e) => {
            tracing::warn!(error = %e, "could not read the schedules");
            return;
        }
    };
    let now = Utc::now();
    for g in due {
        let Some(plan) = g.plan() else { continue };
        let Some(when) = plan.last_due(now) else {
            continue;
        };
        if !guilds::owed(&g, when) {
            continue;
        }
        match guilds::claim(&bot.db, &g, now).await {
            Ok(true) => {
                let span = spans::work("quotebot scheduled post");
                post(bot, &g, now).instrument(span).await;
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, guild = g.guild_id, "could not claim a quote"),
        }
    }
}

async fn post(bot: &Bot, g: &guilds::Guild, claimed_at: chrono::DateTime<Utc>) {
    let Some(channel) = g
        .channel_id
        .as_deref()
        .and_then(|c| c.parse::<u64>().ok())
        .and_then(Id::new_checked)
    else {
        tracing::warn!(
            guild = g.guild_id,
            "the quote channel id is not a Discord id; skipped"
        );
        return;
    };
    let quote = match quotes::pick(&bot.db, &bot.cache, &g.guild_id).await {
        Ok(Some(q)) => q,
        Ok(None) => {
            tracing::warn!(
                guild = g.guild_id,
                "no quotes to post (run `keel quotebot db seed`)"
            );
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not pick a quote");
            let _ = guilds::unclaim(&bot.db, g, claimed_at).await;
            return;
        }
    };
    let text = quote.message();
    let call = spans::provider_call("discord create_message", "discord");
    let answer = bot
        .http
        .create_message(channel)
        .content(&text)
        .into_future()
        .instrument(call.clone())
        .await;
    if answer.is_err() {
        spans::failed(&call);
    }
    match answer {
        Ok(_) => tracing::info!(guild = g.guild_id, channel = %channel, "quote posted"),
        Err(e) => {
            let status = match e.kind() {
                ErrorType::Response { status, .. } => Some(status.get()),
                _ => None,
            };
            if matches!(status, Some(403 | 404)) {
                tracing::warn!(guild = g.guild_id, channel = %channel, status, "the bot cannot post to the quote channel; skipped until the next period");
            } else {
                tracing::warn!(error = %e, guild = g.guild_id, "posting the quote failed; trying again next tick");
                if let Err(e) = guilds::unclaim(&bot.db, g, claimed_at).await {
                    tracing::warn!(error = %e, "could not give the claim back");
                }
            }
        }
    }
}
