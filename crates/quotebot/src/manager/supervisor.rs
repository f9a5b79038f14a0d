//! The shard supervisor: spawns one child per shard, `spawn_delay` apart,
//! each to be ready within `ready_timeout`; respawns a shard that dies,
//! until the `death_limit`-th death within `death_window`; stops at a fatal
//! shard error. On a stop request the shards get SIGTERM, and those alive
//! at `kill_timeout` SIGKILL.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::children::{Event, ExitKind, Shard};
use crate::config::Timing;
use crate::gateway::Gateway;

/// How supervision ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Stopped when asked.
    Stopped,
    /// A shard could not be started or did not get ready in time.
    SpawnFailed(String),
    /// A shard hit a fatal error.
    Fatal(u32),
    /// Shards died too often.
    TooManyDeaths(usize),
}

/// Wait between a death and the respawn (discord.js: 500 ms).
const RESPAWN_DELAY: Duration = Duration::from_millis(500);

pub struct Supervisor {
    total: u32,
    gateway_url: String,
    timing: Timing,
    stop: CancellationToken,
    shards: HashMap<u32, Shard>,
    deaths: VecDeque<Instant>,
    tx: mpsc::UnboundedSender<Event>,
    rx: mpsc::UnboundedReceiver<Event>,
    /// What the health listener reports of the shards.
    gateway: Gateway,
}

impl Supervisor {
    pub fn new(
        total: u32,
        gateway_url: String,
        timing: Timing,
        stop: CancellationToken,
        gateway: Gateway,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        gateway.shards(total);
        Self {
            gateway,
            total,
            gateway_url,
            timing,
            stop,
            shards: HashMap::new(),
            deaths: VecDeque::new(),
            tx,
            rx,
        }
    }

    fn spawn(&mut self, id: u32) -> anyhow::Result<()> {
        let shard = Shard::spawn(id, self.total, &self.gateway_url, self.tx.clone())
            .with_context(|| format!("shard {id} could not be started"))?;
        tracing::info!(shard = id, total = self.total, "shard spawned");
        self.shards.insert(id, shard);
        Ok(())
    }

    /// A death: respawn it, or give up when it is one too many.
    async fn died(&mut self, id: u32) -> Option<Outcome> {
        self.shards.remove(&id);
        self.gateway.down(id);
        let now = Instant::now();
        self.deaths.push_back(now);
        while self
            .deaths
            .front()
            .is_some_and(|t| now.duration_since(*t) > self.timing.death_window)
        {
            self.deaths.pop_front();
        }
        let n = self.deaths.len();
        if n >= self.timing.death_limit {
            tracing::error!(shard = id, deaths = n, window = ?self.timing.death_window, "shards died too often; not respawning");
            return Some(Outcome::TooManyDeaths(n));
        }
        tracing::warn!(shard = id, deaths = n, "shard died; respawning");
        tokio::time::sleep(RESPAWN_DELAY).await;
        if let Err(e) = self.spawn(id) {
            return Some(Outcome::SpawnFailed(format!("{e:#}")));
        }
        self.gateway.restarted();
        None
    }

    /// Handles one event; `Some` ends supervision.
    async fn on(&mut self, event: Event) -> Option<Outcome> {
        match event {
            Event::Ready(id) => {
                tracing::info!(shard = id, "shard ready");
                self.gateway.ready(id);
                None
            }
            Event::Exited(id, ExitKind::Fatal) => {
                self.shards.remove(&id);
                self.gateway.down(id);
                tracing::error!(
                    shard = id,
                    "shard hit a fatal error (login failed or the gateway refused it for good)"
                );
                Some(Outcome::Fatal(id))
            }
            Event::Exited(id, _) => self.died(id).await,
        }
    }

    /// Starts the shards one after another, each ready before the next.
    async fn start_all(&mut self) -> Option<Outcome> {
        for id in 0..self.total {
            if id > 0 {
                tokio::select! {
                    () = self.stop.cancelled() => return Some(Outcome::Stopped),
                    () = tokio::time::sleep(self.timing.spawn_delay) => {}
                }
            }
            if let Err(e) = self.spawn(id) {
                return Some(Outcome::SpawnFailed(format!("{e:#}")));
            }
            let mut deadline = tokio::time::Instant::now() + self.timing.ready_timeout;
            loop {
                tokio::select! {
                    () = self.stop.cancelled() => return Some(Outcome::Stopped),
                    () = tokio::time::sleep_until(deadline) => {
                        return Some(Outcome::SpawnFailed(format!(
                            "shard {id} was not ready within {:?}", self.timing.ready_timeout
                        )));
                    }
                    ev = self.rx.recv() => match ev {
                        Some(Event::Ready(r)) if r == id => {
                            tracing::info!(shard = id, "shard ready");
                            self.gateway.ready(id);
                            break;
                        }
                        Some(other) => {
                            let respawned = matches!(other, Event::Exited(x, _) if x == id);
                            if let Some(out) = self.on(other).await {
                                return Some(out);
                            }
                            if respawned {
                                // The one being started died and was
                                // respawned: a new process, a new deadline.
                                deadline = tokio::time::Instant::now() + self.timing.ready_timeout;
                            }
                        }
                        None => return Some(Outcome::SpawnFailed("event channel closed".to_owned())),
                    },
                }
            }
        }
        None
    }

    /// Supervises until asked to stop or something ends it.
    pub async fn run(&mut self) -> Outcome {
        if let Some(out) = self.start_all().await {
            return out;
        }
        tracing::info!(shards = self.total, "every shard is ready");
        loop {
            tokio::select! {
                () = self.stop.cancelled() => return Outcome::Stopped,
                ev = self.rx.recv() => match ev {
                    Some(ev) => if let Some(out) = self.on(ev).await { return out },
                    None => return Outcome::SpawnFailed("event channel closed".to_owned()),
                },
            }
        }
    }

    /// Stops every shard: SIGTERM, then SIGKILL for those alive at
    /// `kill_timeout`.
    pub async fn stop_all(&mut self) {
        for s in self.shards.values() {
            s.stop();
        }
        let deadline = tokio::time::Instant::now() + self.timing.kill_timeout;
        while !self.shards.is_empty() {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => {
                    for s in self.shards.values() {
                        tracing::warn!(shard = s.id, "shard still alive at the kill timeout; killing it");
                        s.kill();
                    }
                    // Reap them.
                    let reap = tokio::time::Instant::now() + Duration::from_secs(2);
                    while !self.shards.is_empty() {
                        tokio::select! {
                            () = tokio::time::sleep_until(reap) => return,
                            ev = self.rx.recv() => match ev {
                                Some(Event::Exited(id, _)) => { self.shards.remove(&id); }
                                Some(Event::Ready(_)) => {}
                                None => return,
                            },
                        }
                    }
                    return;
                }
                ev = self.rx.recv() => match ev {
                    Some(Event::Exited(id, kind)) => {
                        tracing::info!(shard = id, ?kind, "shard stopped");
                        self.shards.remove(&id);
                        self.gateway.down(id);
                    }
                    Some(Event::Ready(_)) => {}
                    None => return,
                },
            }
        }
    }
}
