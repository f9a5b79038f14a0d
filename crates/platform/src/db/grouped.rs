//! Grouped reads: concurrent lookups of one entity by key, as one query.
//!
//! On PostgreSQL every query is a round trip: a write to the server's
//! socket, which wakes its backend process, and a wake-up of keel's thread
//! when the answer comes. Profiled under `GET /register/status`, that send
//! and the wake-up it causes were two fifths of keel's samples, for a
//! one-row primary-key read. Here concurrent lookups of the same kind share
//! a query (`WHERE key IN (...)`), by the group commit's own
//! [`Batcher`]: one query at a time, and whatever keys arrive meanwhile go
//! together in the next one. A lone lookup goes at once; only a busy server
//! groups.
//!
//! On SQLite, where a short read runs on the calling thread without a round
//! trip (see [`super::inline`]), there is nothing to save: lookups are
//! plain [`Db::one_short`] reads. So they are on PostgreSQL when the reader
//! has stopped (shutdown) or cannot be reached.
//!
//! Used by svc's device lookup (GET /register/status), the one endpoint
//! that needed it (docs/performance.md, "Grouped reads on PostgreSQL"):
//! 26.7k -> 50-54k req/s by hand, 136 % of its pgbench floor in the full
//! run.

use std::collections::HashMap;
use std::hash::Hash;

use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, TryIntoModel};

use super::Db;
use crate::batch::{BatchError, Batcher};
use crate::tasks::Tasks;

/// Keys in one query at most.
const MAX_KEYS: usize = 64;

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
    /// PostgreSQL only.
    batch: Option<Batcher<K, Option<E::Model>>>,
}

impl<E: EntityTrait, K> Clone for GroupedReads<E, K> {
    fn clone(&self) -> Self {
        Self {
            db: self.db.clone(),
            column: self.column,
            batch: self.batch.clone(),
        }
    }
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
    ) -> Self {
        let batch = db.short.is_some().then(|| {
            Batcher::start_with(
                tasks,
                name,
                MAX_KEYS,
                db.clone(),
                move |db, keys: Vec<K>| async move {
                    read::<E, K>(&db, column, key_of, name, keys).await
                },
            )
        });
        Self {
            db: db.clone(),
            column,
            batch,
        }
    }

    /// The row whose key is `key`, if there is one.
    pub async fn get(&self, key: K) -> Result<Option<E::Model>, DbErr> {
        let Some(batch) = &self.batch else {
            return self.one(key).await;
        };
        match batch.submit(key.clone()).await {
            Ok(found) => Ok(found),
            // The reader has stopped (shutdown): read alone.
            Err(BatchError::Stopped) => self.one(key).await,
            // The query's own error, for every lookup it served.
            Err(BatchError::Write(e)) => Err(e
                .get()
                .downcast_ref::<DbErr>()
                .cloned()
                .unwrap_or_else(|| DbErr::Custom(crate::failure::chain(e.get())))),
        }
    }

    async fn one(&self, key: K) -> Result<Option<E::Model>, DbErr> {
        self.db
            .one_short(E::find().filter(self.column.eq(key)))
            .await
    }
}

/// One query for `keys`; each key's row (or none), in their order. A key
/// asked twice gets a copy; the last asker takes the row itself.
async fn read<E: Looked, K: Key>(
    db: &Db,
    column: E::Column,
    key_of: KeyOf<E::Model, K>,
    name: &'static str,
    keys: Vec<K>,
) -> Result<Vec<Option<E::Model>>, DbErr> {
    let mut asked: HashMap<K, usize> = HashMap::with_capacity(keys.len());
    for key in &keys {
        *asked.entry(key.clone()).or_default() += 1;
    }
    metrics::counter!("keel_db_grouped_reads_total", "read" => name).increment(asked.len() as u64);
    metrics::counter!("keel_db_grouped_read_queries_total", "read" => name).increment(1);
    let distinct: Vec<K> = asked.keys().cloned().collect();
    let models = db
        .all_short(E::find().filter(column.is_in(distinct)))
        .await?;
    let mut found: HashMap<K, E::Model> = models
        .into_iter()
        .map(|m| (key_of(&m).clone(), m))
        .collect();
    Ok(keys
        .iter()
        .map(|key| {
            let left = asked.get_mut(key)?;
            *left -= 1;
            if *left == 0 {
                found.remove(key)
            } else {
                found.get(key).cloned()
            }
        })
        .collect())
}
