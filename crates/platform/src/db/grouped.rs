//! Grouped reads: concurrent lookups of one entity by key, as one query.
//!
//! On PostgreSQL every query is a round trip: a write to the server's
//! socket, which wakes its backend process, and a wake-up of keel's thread
//! when the answer comes. Profiled under `GET /register/status`, that send
//! and the wake-up it causes were two fifths of keel's samples, for a
//! one-row primary-key read. Here concurrent lookups of the same kind share
//! a query (`WHERE key IN (...)`), as group commit shares a transaction: a
//! reader task keeps at most a few queries in flight, and whatever keys
//! arrive meanwhile go together in the next one. A lone lookup goes at
//! once; only a busy server groups.
//!
//! On SQLite, where a short read runs on the calling thread without a round
//! trip (see [`super::inline`]), there is nothing to save: lookups are
//! plain [`Db::one_short`] reads. So they are on PostgreSQL when the reader
//! has stopped (shutdown) or cannot be reached.

use std::collections::HashMap;
use std::hash::Hash;

use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, TryIntoModel};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::Db;
use crate::http::body_guard::panic_text;
use crate::tasks::Tasks;

type Answer<M> = Result<Option<M>, String>;
type Ask<K, M> = (K, oneshot::Sender<Answer<M>>);

/// An entity looked up by key: its models are cloned for a key asked twice.
pub trait Looked:
    EntityTrait<Model: Clone + Send + Sync, ActiveModel: TryIntoModel<Self::Model>>
{
}
impl<E> Looked for E where
    E: EntityTrait<Model: Clone + Send + Sync, ActiveModel: TryIntoModel<E::Model>>
{
}

/// A lookup key: bound as a query value, matched back by equality.
pub trait Key: Clone + Eq + Hash + Into<sea_orm::Value> + Send + Sync + 'static {}
impl<K> Key for K where K: Clone + Eq + Hash + Into<sea_orm::Value> + Send + Sync + 'static {}

/// How a lookup's key is read back from the model it found.
pub type KeyOf<M, K> = for<'a> fn(&'a M) -> &'a K;

/// Lookups of `E` by the key in `column`; cheap to clone.
pub struct GroupedReads<E: EntityTrait, K> {
    db: Db,
    column: E::Column,
    tx: Option<mpsc::Sender<Ask<K, E::Model>>>,
}

impl<E: EntityTrait, K> Clone for GroupedReads<E, K> {
    fn clone(&self) -> Self {
        Self {
            db: self.db.clone(),
            column: self.column,
            tx: self.tx.clone(),
        }
    }
}

/// What one reader may have: queries in flight, keys in one query.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub in_flight: usize,
    pub keys: usize,
}

impl Limits {
    /// Two queries in flight: one being answered while the next one's keys
    /// gather. More would spread the keys thin (a query each, as without
    /// grouping); one would leave the server idle while an answer travels.
    pub const DEFAULT: Self = Self {
        in_flight: 2,
        keys: 64,
    };
}

impl<E: Looked, K: Key> GroupedReads<E, K> {
    /// Lookups of `E` by `column` (unique: at most one row a key), which
    /// `key_of` reads back from a model. On PostgreSQL the reader named
    /// `name` is one of `tasks`; on SQLite there is none.
    pub fn start(
        db: &Db,
        tasks: &Tasks,
        name: &'static str,
        column: E::Column,
        key_of: KeyOf<E::Model, K>,
        limits: Limits,
    ) -> Self {
        let tx = (db.short.is_some() && limits.in_flight > 0).then(|| {
            let (tx, rx) = mpsc::channel(limits.keys.max(1) * 8);
            let reader = Reader::<E, K> {
                db: db.clone(),
                column,
                key_of,
                name,
            };
            tasks.spawn(name, reader.run(rx, tasks.token(), limits));
            tx
        });
        Self {
            db: db.clone(),
            column,
            tx,
        }
    }

    /// The row whose key is `key`, if there is one.
    pub async fn get(&self, key: K) -> Result<Option<E::Model>, DbErr> {
        let Some(tx) = &self.tx else {
            return self.one(key).await;
        };
        let Ok(slot) = tx.reserve().await else {
            // The reader has stopped (shutdown): read alone.
            return self.one(key).await;
        };
        let (reply, answer) = oneshot::channel();
        slot.send((key, reply));
        match answer.await {
            Ok(found) => found.map_err(DbErr::Custom),
            Err(_) => Err(DbErr::Custom("the grouped read was dropped".to_owned())),
        }
    }

    async fn one(&self, key: K) -> Result<Option<E::Model>, DbErr> {
        self.db
            .one_short(E::find().filter(self.column.eq(key)))
            .await
    }
}

/// The task that groups lookups into queries.
struct Reader<E: EntityTrait, K> {
    db: Db,
    column: E::Column,
    key_of: KeyOf<E::Model, K>,
    name: &'static str,
}

impl<E: Looked, K: Key> Reader<E, K> {
    /// Takes lookups until shutdown, at most `limits.in_flight` queries at
    /// a time; then answers what is queued and stops.
    async fn run(
        self,
        mut rx: mpsc::Receiver<Ask<K, E::Model>>,
        token: CancellationToken,
        limits: Limits,
    ) {
        let mut in_flight = FuturesUnordered::new();
        let mut closing = false;
        loop {
            tokio::select! {
                Some(()) = in_flight.next(), if !in_flight.is_empty() => {}
                next = rx.recv(), if in_flight.len() < limits.in_flight => {
                    let Some(first) = next else { break };
                    let mut asks = vec![first];
                    while asks.len() < limits.keys {
                        match rx.try_recv() {
                            Ok(ask) => asks.push(ask),
                            Err(_) => break,
                        }
                    }
                    in_flight.push(self.read(asks));
                }
                () = token.cancelled(), if !closing => {
                    rx.close();
                    closing = true;
                }
            }
        }
        while in_flight.next().await.is_some() {}
    }

    /// One query for `asks`, and each its row (or none).
    async fn read(&self, asks: Vec<Ask<K, E::Model>>) {
        let mut waiting: HashMap<K, Vec<oneshot::Sender<Answer<E::Model>>>> =
            HashMap::with_capacity(asks.len());
        for (key, reply) in asks {
            waiting.entry(key).or_default().push(reply);
        }
        let keys: Vec<K> = waiting.keys().cloned().collect();
        metrics::counter!("keel_db_grouped_reads_total", "read" => self.name)
            .increment(keys.len() as u64);
        metrics::counter!("keel_db_grouped_read_queries_total", "read" => self.name).increment(1);
        let select = E::find().filter(self.column.is_in(keys));
        let found = std::panic::AssertUnwindSafe(self.db.all_short(select))
            .catch_unwind()
            .await;
        let models = match found {
            Ok(Ok(models)) => models,
            Ok(Err(e)) => return fail(waiting, &e.to_string()),
            Err(panic) => return fail(waiting, &panic_text(panic.as_ref())),
        };
        for model in models {
            let Some(replies) = waiting.remove((self.key_of)(&model)) else {
                continue;
            };
            answer(replies, model);
        }
        for replies in waiting.into_values() {
            for reply in replies {
                let _ = reply.send(Ok(None));
            }
        }
    }
}

/// Sends `model` to every reply (a key asked for twice gets two copies).
fn answer<M: Clone>(mut replies: Vec<oneshot::Sender<Answer<M>>>, model: M) {
    if let Some(last) = replies.pop() {
        for reply in replies {
            let _ = reply.send(Ok(Some(model.clone())));
        }
        let _ = last.send(Ok(Some(model)));
    }
}

fn fail<K, M>(waiting: HashMap<K, Vec<oneshot::Sender<Answer<M>>>>, why: &str) {
    tracing::error!(error = %why, "a grouped read failed");
    for reply in waiting.into_values().flatten() {
        let _ = reply.send(Err(why.to_owned()));
    }
}
