//! One shard process (`keel quotebot shard --id N --total M`, started by
//! the manager): its own database pool and Redis connection, one gateway
//! session, the commands of its guilds, their scheduled quotes, and the
//! presence. It prints `ready` once its session is ready. On SIGTERM it
//! closes the session; if that takes longer than `shard_watchdog`, it
//! exits anyway. A fatal gateway close (bad token 4004, 4010–4014) exits
//! with code 78, which the manager does not respawn.

mod commands;
mod interactions;
mod presence;
mod scheduler;

use std::io::Write;
use std::time::Duration;

use keel_platform::cache::Cache;
use keel_platform::db::Db;
use keel_platform::signals::ShutdownSignals;
use tokio_util::sync::CancellationToken;
use twilight_gateway::{
    CloseFrame, ConfigBuilder, Event, EventTypeFlags, Intents, Shard, ShardId, StreamExt,
};
use twilight_model::channel::message::AllowedMentions;

use crate::config::Config;
use crate::domain::guilds;
use crate::manager::REDIS_PREFIX;
use crate::manager::children::{FATAL_EXIT, GATEWAY_URL_VAR, READY};
use crate::{db, watchdog};

/// What a shard's handlers share.
pub struct Bot {
    pub cfg: Config,
    pub db: Db,
    pub cache: Cache,
    pub http: twilight_http::Client,
    pub shard: u32,
    pub total: u32,
}

/// The REST client. Every message it sends pings nobody unless it says
/// so (`allowed_mentions: {"parse": []}`): quotes and suggestions are
/// user text, and an `@everyone` in one must not reach a whole server.
fn http_client(cfg: &Config) -> twilight_http::Client {
    let api = &cfg.discord_api;
    let mut b = twilight_http::Client::builder()
        .token(cfg.token.expose().to_owned())
        .default_allowed_mentions(AllowedMentions::default())
        .timeout(Duration::from_secs(10));
    if api.host_str() != Some("discord.com") {
        let host = api.host_str().unwrap_or("discord.com");
        let hostport = api
            .port()
            .map_or_else(|| host.to_owned(), |p| format!("{host}:{p}"));
        b = b.proxy(hostport, api.scheme() == "http");
    }
    b.build()
}

/// Resolves when the manager that started this shard is gone (killed
/// without a chance to stop its shards): the shard must not live on.
async fn orphaned() {
    let parent = nix::unistd::getppid();
    let mut every = tokio::time::interval(Duration::from_millis(500));
    loop {
        every.tick().await;
        if nix::unistd::getppid() != parent {
            return;
        }
    }
}

fn say_ready() {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{READY}");
    let _ = out.flush();
}

pub async fn run(cfg: Config, id: u32, total: u32) -> anyhow::Result<()> {
    let shard_id = ShardId::new_checked(id, total)
        .ok_or_else(|| anyhow::anyhow!("--id {id} must be below --total {total}"))?;
    // Now, not when first awaited: a stop asked for while connecting is kept.
    let mut stop_signals = ShutdownSignals::listen();
    keel_platform::crypto::install_crypto_provider();
    let gateway_url =
        std::env::var(GATEWAY_URL_VAR).unwrap_or_else(|_| "wss://gateway.discord.gg".to_owned());
    let conn = db::connect(&cfg.db).await?;
    let cache = Cache::redis(&cfg.redis_url, REDIS_PREFIX, Duration::from_secs(5))
        .await
        .map_err(|e| anyhow::anyhow!("REDIS_URL: cannot connect: {e}"))?;
    let config = ConfigBuilder::new(cfg.token.expose().to_owned(), Intents::GUILDS)
        .proxy_url(gateway_url)
        .build();
    let mut shard = Shard::with_config(shard_id, config);
    let bot = std::sync::Arc::new(Bot {
        http: http_client(&cfg),
        cfg,
        db: conn,
        cache,
        shard: id,
        total,
    });
    let stop = CancellationToken::new();
    let watch = stop.clone();
    let grace = bot.cfg.timing.shard_watchdog;
    tokio::spawn(async move {
        tokio::select! {
            () = stop_signals.next() => {}
            () = orphaned() => tracing::warn!(shard = id, "the manager is gone; stopping"),
        }
        watchdog::arm(grace, "a shard", 1);
        watch.cancel();
    });
    let mut schedule = tokio::time::interval(bot.cfg.timing.schedule_every);
    let mut presence = tokio::time::interval(bot.cfg.timing.presence_every);
    let mut presence_n = 0u64;
    let mut ready = false;
    let mut closing = false;
    let mut fatal = None;
    loop {
        tokio::select! {
            () = stop.cancelled(), if !closing => {
                closing = true;
                shard.close(CloseFrame::NORMAL);
            }
            _ = schedule.tick(), if ready && !closing => {
                let b = bot.clone();
                tokio::spawn(async move { scheduler::tick(&b).await });
            }
            _ = presence.tick(), if ready && !closing => {
                presence::rotate(&bot.db, &shard.sender(), presence_n).await;
                presence_n = presence_n.wrapping_add(1);
            }
            item = shard.next_event(EventTypeFlags::all()) => match item {
                None => break,
                Some(Err(e)) => tracing::warn!(shard = id, error = %e, "gateway error"),
                Some(Ok(Event::GatewayClose(frame))) => {
                    if closing {
                        break;
                    }
                    if let Some(f) = &frame {
                        tracing::warn!(shard = id, code = f.code, reason = %f.reason, "the gateway closed the session");
                        if matches!(f.code, 4004 | 4010..=4014) {
                            fatal = Some(f.code);
                        }
                    }
                }
                Some(Ok(Event::GatewayHello(_))) if closing => {
                    // Reconnected after our close: the gateway never
                    // answered it, but the session is over all the same.
                    break;
                }
                Some(Ok(event)) => {
                    if let Event::Ready(r) = &event {
                        tracing::info!(shard = id, total, session = r.session_id, "gateway session ready");
                        if !ready {
                            ready = true;
                            if id == 0 {
                                register(&bot, r.application.id).await;
                            }
                            say_ready();
                        }
                    }
                    on_event(&bot, event);
                }
            },
        }
    }
    if let Some(code) = fatal {
        tracing::error!(shard = id, code, "fatal gateway close: not reconnecting");
        std::process::exit(FATAL_EXIT);
    }
    tracing::info!(shard = id, "shard stopped");
    Ok(())
}

async fn register(
    bot: &Bot,
    app: twilight_model::id::Id<twilight_model::id::marker::ApplicationMarker>,
) {
    let cmds = commands::all();
    match bot.http.interaction(app).set_global_commands(&cmds).await {
        Ok(_) => tracing::info!(count = cmds.len(), "slash commands registered"),
        Err(e) => tracing::warn!(error = %e, "could not register the slash commands"),
    }
}

/// Handles an event in its own task (the gateway keeps being read).
fn on_event(bot: &std::sync::Arc<Bot>, event: Event) {
    let bot = bot.clone();
    match event {
        Event::GuildCreate(g) => {
            tokio::spawn(async move {
                if let Err(e) = guilds::joined(&bot.db, g.id().get()).await {
                    tracing::warn!(error = %e, "could not record a guild");
                }
            });
        }
        Event::GuildDelete(g) if !g.unavailable.unwrap_or(false) => {
            tokio::spawn(async move {
                if let Err(e) = guilds::left(&bot.db, g.id.get()).await {
                    tracing::warn!(error = %e, "could not forget a guild");
                }
            });
        }
        Event::InteractionCreate(i) => {
            tokio::spawn(async move { interactions::handle(&bot, i.0).await });
        }
        _ => {}
    }
}
