//! A fake Discord for a bot: the REST API under `/api/v10` (gateway/bot,
//! global commands, channel messages, interaction callbacks; the bot token
//! checked on every call; scripted 401/429/5xx answers) and the gateway
//! WebSocket on the same listener (hello, identify, ready, heartbeats,
//! guild and interaction dispatches, chosen close codes). Facts in
//! Discord's documentation; payload shapes checked against twilight-model.

mod gateway;
pub mod payloads;
mod rest;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::lock;
use axum::routing::{any, get, post, put};
use axum::{Router, middleware};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

pub use payloads::{APPLICATION_ID, Invoker};

/// A scripted answer to `GET /gateway/bot`.
#[derive(Debug, Clone, Copy)]
pub enum Lookup {
    /// 429 with this `retry_after` (seconds).
    RateLimited(f64),
    Status(u16),
}

/// A message the bot posted.
#[derive(Debug, Clone)]
pub struct Message {
    pub channel: u64,
    pub body: Value,
    pub authorization: Option<String>,
    pub content_type: Option<String>,
    pub user_agent: Option<String>,
}

/// What a test asks one gateway connection to do.
#[derive(Debug)]
enum Control {
    Dispatch(String, Value),
    Close(u16),
}

struct Conn {
    id: u64,
    shard: Option<[u32; 2]>,
    tx: UnboundedSender<Control>,
}

#[derive(Default)]
struct Inner {
    token: String,
    shards: Mutex<u32>,
    guilds: Mutex<Vec<u64>>,
    lookup_script: Mutex<Vec<Lookup>>,
    lookups: Mutex<usize>,
    forbidden: Mutex<HashSet<u64>>,
    messages: Mutex<Vec<Message>>,
    refused_posts: Mutex<Vec<u64>>,
    commands: Mutex<Vec<Value>>,
    callbacks: Mutex<Vec<(u64, Value)>>,
    identifies: Mutex<Vec<[u32; 2]>>,
    presences: Mutex<Vec<Value>>,
    close_on_identify: Mutex<Option<u16>>,
    hold_identify: Mutex<bool>,
    ignore_close: Mutex<bool>,
    conns: Mutex<Vec<Conn>>,
    next_conn: Mutex<u64>,
    /// The `host:port` its gateway URLs name.
    advertised: Mutex<String>,
}

#[derive(Clone)]
pub struct FakeDiscordBot {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
}

impl FakeDiscordBot {
    /// A fake Discord that accepts `token` (sent as `Bot <token>`).
    pub async fn start(token: &str) -> Self {
        let inner = Self::inner(token);
        let addr = crate::serve_on_loopback(Self::app(&inner), "fake Discord").await;
        *lock(&inner.advertised) = addr.to_string();
        Self { addr, inner }
    }

    /// The fake on `bind`, its gateway URLs naming `advertised`
    /// (`host:port` as its clients reach it; default the bound address):
    /// the `fake-discord` process, for the container test.
    pub async fn start_on(bind: SocketAddr, token: &str, advertised: Option<&str>) -> Self {
        let inner = Self::inner(token);
        let listener = tokio::net::TcpListener::bind(bind)
            .await
            .expect("bind the fake Discord");
        let addr = listener.local_addr().expect("fake Discord address");
        *lock(&inner.advertised) = advertised.map_or_else(|| addr.to_string(), str::to_owned);
        let app = Self::app(&inner);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, inner }
    }

    fn inner(token: &str) -> Arc<Inner> {
        Arc::new(Inner {
            token: token.to_owned(),
            shards: Mutex::new(1),
            ..Inner::default()
        })
    }

    fn app(inner: &Arc<Inner>) -> Router {
        // Every call the bot makes with its token (the lookup counts
        // refused calls too, so it checks the token itself).
        let bot = Router::new()
            .route(
                "/api/v10/applications/{app}/commands",
                put(rest::set_commands),
            )
            .route(
                "/api/v10/channels/{channel}/messages",
                post(rest::create_message),
            )
            .route_layer(middleware::from_fn_with_state(
                inner.clone(),
                rest::bot_token,
            ));
        Router::new()
            .route("/", get(gateway::upgrade))
            .route("/api/v10/gateway/bot", get(rest::gateway_bot))
            .merge(bot)
            .route(
                "/api/v10/interactions/{id}/{token}/callback",
                post(rest::callback),
            )
            .route("/_fake/state", get(rest::state))
            .fallback(any(rest::unknown))
            .with_state(inner.clone())
    }

    /// The REST base (`KEEL_DISCORD_API_URL`).
    pub fn api_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn gateway_url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    /// The shard count `GET /gateway/bot` recommends.
    pub fn set_shards(&self, n: u32) {
        *lock(&self.inner.shards) = n;
    }

    /// A guild the bot is in: announced to its shard on identify.
    pub fn add_guild(&self, id: u64) {
        lock(&self.inner.guilds).push(id);
    }

    /// The next lookups get these answers, in order, before succeeding.
    pub fn script_lookups(&self, answers: &[Lookup]) {
        lock(&self.inner.lookup_script).extend_from_slice(answers);
    }

    pub fn lookups(&self) -> usize {
        *lock(&self.inner.lookups)
    }

    /// Posting to `channel` gets 403 Missing Access (code 50001).
    pub fn forbid_channel(&self, channel: u64) {
        lock(&self.inner.forbidden).insert(channel);
    }

    pub fn messages(&self) -> Vec<Message> {
        lock(&self.inner.messages).clone()
    }

    /// Channels of posts refused with 403 (one entry per attempt).
    pub fn refused_posts(&self) -> Vec<u64> {
        lock(&self.inner.refused_posts).clone()
    }

    /// The last global command set registered.
    pub fn commands(&self) -> Vec<Value> {
        lock(&self.inner.commands).clone()
    }

    /// Interaction responses: (interaction id, body).
    pub fn callbacks(&self) -> Vec<(u64, Value)> {
        lock(&self.inner.callbacks).clone()
    }

    /// The `shard` of every identify so far.
    pub fn identifies(&self) -> Vec<[u32; 2]> {
        lock(&self.inner.identifies).clone()
    }

    /// Presence updates (op 3 payloads) so far.
    pub fn presences(&self) -> Vec<Value> {
        lock(&self.inner.presences).clone()
    }

    /// Identified sessions now open, by shard.
    pub fn sessions(&self) -> Vec<[u32; 2]> {
        lock(&self.inner.conns)
            .iter()
            .filter_map(|c| c.shard)
            .collect()
    }

    /// Every identify from now on is answered with this close code (4004:
    /// authentication failed), or accepted again with `None`.
    pub fn close_on_identify(&self, code: Option<u16>) {
        *lock(&self.inner.close_on_identify) = code;
    }

    /// Identifies are accepted but not answered with READY (a gateway that
    /// hangs) while `hold`; lifting it answers the held ones.
    pub fn hold_identify(&self, hold: bool) {
        *lock(&self.inner.hold_identify) = hold;
    }

    /// A shard's close frame is neither answered nor followed by a hang-up
    /// (a gateway that stalls), while `ignore`.
    pub fn ignore_close(&self, ignore: bool) {
        *lock(&self.inner.ignore_close) = ignore;
    }

    /// Closes every open session with `code` (4000: reconnectable).
    pub fn close_sessions(&self, code: u16) {
        for c in lock(&self.inner.conns).iter() {
            let _ = c.tx.send(Control::Close(code));
        }
    }

    /// Dispatches an event to the shard that owns `guild` (shard 0 for
    /// none); false when that shard has no session.
    pub fn dispatch(&self, guild: Option<u64>, t: &str, d: Value) -> bool {
        let conns = lock(&self.inner.conns);
        let target = conns.iter().find(|c| {
            c.shard
                .is_some_and(|[id, total]| owner_shard(guild.unwrap_or(0), total) == id)
        });
        target.is_some_and(|c| c.tx.send(Control::Dispatch(t.to_owned(), d)).is_ok())
    }

    /// Sends a slash command as `who`; false when no shard could take it.
    pub fn command(&self, id: u64, who: &Invoker, name: &str, options: Value) -> bool {
        let token = format!("itoken-{id}");
        let i = payloads::command(id, &token, who, name, options);
        self.dispatch(who.guild, "INTERACTION_CREATE", i)
    }

    /// The bot joins `guild` now (the guild's shard gets `GUILD_CREATE`).
    pub fn join(&self, guild: u64) -> bool {
        self.add_guild(guild);
        self.dispatch(Some(guild), "GUILD_CREATE", payloads::guild(guild, 1))
    }

    /// The bot is removed from `guild` (`GUILD_DELETE` without
    /// `unavailable`).
    pub fn remove(&self, guild: u64) -> bool {
        lock(&self.inner.guilds).retain(|g| *g != guild);
        self.dispatch(Some(guild), "GUILD_DELETE", payloads::guild_removed(guild))
    }
}

/// Discord's shard formula.
pub fn owner_shard(guild: u64, total: u32) -> u32 {
    u32::try_from((guild >> 22) % u64::from(total.max(1))).unwrap_or(0)
}
