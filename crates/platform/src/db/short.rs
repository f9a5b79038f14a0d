//! Short reads: an indexed lookup or a limited page, read without the
//! pool where that is cheaper (inline on SQLite, on connections of their
//! own on PostgreSQL), else through the pool.

use std::time::Instant;

use sea_orm::{
    DbBackend, DbErr, EntityTrait, QuerySelect, QueryTrait, Select, SelectModel, SelectTwo,
    SelectTwoModel, TryIntoModel,
};

use super::{Db, count, counted, inline, system_name};

impl Db {
    /// `select.all(db.read())`, for a read the caller knows to be short (an
    /// indexed lookup, a limited page): on SQLite it runs at once on this
    /// thread (see [`super::inline`]), on PostgreSQL on a connection outside the
    /// pool (see [`super::short_pg`]), else through the pool.
    pub async fn all_short<E>(&self, select: Select<E>) -> Result<Vec<E::Model>, DbErr>
    where
        E: EntityTrait,
        E::ActiveModel: TryIntoModel<E::Model>,
    {
        match self.try_short(&select).await {
            Ok(models) => Ok(models),
            Err(_) => select.all(&self.reader).await,
        }
    }

    /// This backend's short read of `select`: inline on SQLite, outside the
    /// pool on PostgreSQL; or why it was not done.
    async fn try_short<E>(&self, select: &Select<E>) -> Result<Vec<E::Model>, inline::Miss>
    where
        E: EntityTrait,
        E::ActiveModel: TryIntoModel<E::Model>,
    {
        let timer = ShortTimer::start();
        let (read, backend) = if self.short.is_some() {
            (self.try_short_pg(select).await, DbBackend::Postgres)
        } else {
            (self.try_inline(select), DbBackend::Sqlite)
        };
        timer.done::<E>(backend, read.is_ok());
        read
    }

    /// The models `select` reads on a short-read connection, or why they
    /// were not. Public for tests that check a hot read is served there.
    pub async fn try_short_pg<E: EntityTrait>(
        &self,
        select: &Select<E>,
    ) -> Result<Vec<E::Model>, inline::Miss> {
        let Some(short) = &self.short else {
            return Err(inline::Miss::Off);
        };
        counted(
            short
                .all::<SelectModel<E::Model>>(select.build(DbBackend::Postgres))
                .await,
            "short",
        )
    }

    /// `select.one(db.read())`, as [`Db::all_short`].
    pub async fn one_short<E>(&self, select: Select<E>) -> Result<Option<E::Model>, DbErr>
    where
        E: EntityTrait,
        E::ActiveModel: TryIntoModel<E::Model>,
    {
        let select = select.limit(1);
        match self.try_short(&select).await {
            Ok(models) => Ok(models.into_iter().next()),
            Err(_) => select.one(&self.reader).await,
        }
    }

    /// Runs `select` inline and hands each row (columns in the entity's
    /// order: `Column::X as usize`) to `each`, or says why it did not; the
    /// caller then reads through the pool. For callers that write a
    /// response straight from the rows.
    pub fn try_inline_rows<E: EntityTrait>(
        &self,
        select: &Select<E>,
        each: impl FnMut(&inline::InlineRow<'_>) -> Result<(), inline::Miss>,
    ) -> Result<(), inline::Miss> {
        let Some(reads) = &self.inline else {
            return Err(inline::Miss::Off);
        };
        let timer = ShortTimer::start();
        let read = count(reads.rows::<E>(&select.build(DbBackend::Sqlite), each));
        timer.done::<E>(DbBackend::Sqlite, read.is_ok());
        read
    }

    /// The models `select` reads, read inline, or why they were not (the
    /// `*_short` reads then go through the pool). Public for tests that
    /// check a hot read is served inline.
    pub fn try_inline<E>(&self, select: &Select<E>) -> Result<Vec<E::Model>, inline::Miss>
    where
        E: EntityTrait,
        E::ActiveModel: TryIntoModel<E::Model>,
    {
        let Some(reads) = &self.inline else {
            return Err(inline::Miss::Off);
        };
        count(reads.all::<E>(&select.build(DbBackend::Sqlite)))
    }

    /// `select.one(db.read())` for a short read of a row and its related
    /// row (`find_also_related`, a join): on PostgreSQL on a connection
    /// outside the pool (see [`super::short_pg`]), as [`Db::one_short`]; on SQLite
    /// through the pool (the inline reads decode one entity's columns).
    pub async fn one_short_pair<E, F>(
        &self,
        select: SelectTwo<E, F>,
    ) -> Result<Option<(E::Model, Option<F::Model>)>, DbErr>
    where
        E: EntityTrait,
        F: EntityTrait,
    {
        let select = select.limit(1);
        if let Some(short) = &self.short {
            let timer = ShortTimer::start();
            let stmt = select.build(DbBackend::Postgres);
            let read = counted(
                short.all::<SelectTwoModel<E::Model, F::Model>>(stmt).await,
                "short",
            );
            timer.done::<E>(DbBackend::Postgres, read.is_ok());
            if let Ok(rows) = read {
                return Ok(rows.into_iter().next());
            }
        }
        select.one(&self.reader).await
    }
}

/// Times a short read (inline on SQLite, outside the pool on PostgreSQL;
/// SeaORM's callback sees none of these) when requests are timed or traces
/// are on, else nothing: `observe::short_read` keeps it.
struct ShortTimer {
    started: Option<Instant>,
}

impl ShortTimer {
    fn start() -> Self {
        Self {
            started: crate::observe::watching().then(Instant::now),
        }
    }

    /// The read of `E` is over (`ok` when it was served; one that was not
    /// counts its time, and makes no span: the pool's statement will).
    fn done<E: EntityTrait>(self, backend: DbBackend, ok: bool) {
        let Some(started) = self.started else {
            return;
        };
        let took = started.elapsed();
        if ok {
            let entity = E::default();
            crate::observe::short_read(system_name(backend), entity.table_name(), took);
        } else {
            crate::observe::tally::record(crate::observe::Phase::Db, took);
        }
    }
}
