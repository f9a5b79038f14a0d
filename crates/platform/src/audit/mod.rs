//! One audit log for what people (and apps) do through keel: each service's
//! administrative actions and the operators' (`keel_audit`), filterable by
//! actor, action and subject, newest first. An entry is written by the
//! code that made the change, after it; it holds no secret.

pub mod entity;

use chrono::Utc;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Set,
};
use serde_json::Value;

use crate::db::Db;

/// Who acted, and from where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub name: String,
    pub address: Option<String>,
}

impl Actor {
    /// Someone at an address.
    pub fn at(name: impl Into<String>, address: std::net::IpAddr) -> Self {
        Self {
            name: name.into(),
            address: Some(address.to_string()),
        }
    }

    /// The command line (`keel svc admin ...`).
    pub fn cli() -> Self {
        Self {
            name: "cli".to_owned(),
            address: None,
        }
    }
}

/// One entry to write.
#[derive(Debug, Clone, Default)]
pub struct Entry {
    pub service: &'static str,
    pub action: &'static str,
    pub subject: Option<String>,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub detail: Option<Value>,
}

impl Entry {
    pub fn new(service: &'static str, action: &'static str) -> Self {
        Self {
            service,
            action,
            ..Self::default()
        }
    }

    #[must_use]
    pub fn on(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    #[must_use]
    pub fn change(mut self, before: Option<Value>, after: Option<Value>) -> Self {
        self.before = before;
        self.after = after;
        self
    }

    #[must_use]
    pub fn detail(mut self, detail: Value) -> Self {
        self.detail = Some(detail);
        self
    }

    fn row(self, actor: &Actor) -> entity::ActiveModel {
        let text = |v: Option<Value>| v.map(|v| v.to_string());
        entity::ActiveModel {
            at: Set(Utc::now()),
            service: Set(self.service.to_owned()),
            actor: Set(actor.name.clone()),
            action: Set(self.action.to_owned()),
            subject: Set(self.subject),
            before: Set(text(self.before)),
            after: Set(text(self.after)),
            detail: Set(text(self.detail)),
            address: Set(actor.address.clone()),
            ..Default::default()
        }
    }
}

/// Writes each entry, done by its actor, on `conn` (a transaction of the
/// change, or the write pool), in one statement.
pub async fn record_all(
    conn: &impl ConnectionTrait,
    entries: Vec<(Actor, Entry)>,
) -> Result<(), DbErr> {
    if entries.is_empty() {
        return Ok(());
    }
    entity::Entity::insert_many(entries.into_iter().map(|(a, e)| e.row(&a)))
        .exec_without_returning(conn)
        .await?;
    Ok(())
}

/// Writes one entry; a failure to write it is logged, not returned: the
/// change it records is done already.
pub async fn record(db: &Db, actor: &Actor, entry: Entry) {
    let action = entry.action;
    if let Err(e) = record_all(db.write(), vec![(actor.clone(), entry)]).await {
        tracing::error!(error = %crate::failure::chain(&e), action, "writing an audit entry failed");
    }
}

/// Deletes `service`'s entries of `action` on `subject` (what an erasure
/// must not leave: entries that name the person and where they were).
pub async fn forget(
    conn: &impl ConnectionTrait,
    service: &str,
    action: &str,
    subject: &str,
) -> Result<u64, DbErr> {
    use entity::Column;
    Ok(entity::Entity::delete_many()
        .filter(Column::Service.eq(service))
        .filter(Column::Action.eq(action))
        .filter(Column::Subject.eq(subject))
        .exec(conn)
        .await?
        .rows_affected)
}

/// Which entries to list: a service's (every service's when `None`: the
/// console's), narrowed by whichever is set.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub service: Option<&'static str>,
    pub actor: Option<String>,
    pub action: Option<String>,
    pub subject: Option<String>,
}

impl Filter {
    fn condition(&self) -> Condition {
        use entity::Column;
        let mut all = Condition::all();
        if let Some(service) = self.service {
            all = all.add(Column::Service.eq(service));
        }
        if let Some(a) = &self.actor {
            all = all.add(Column::Actor.eq(a.as_str()));
        }
        if let Some(a) = &self.action {
            all = all.add(Column::Action.eq(a.as_str()));
        }
        if let Some(s) = &self.subject {
            all = all.add(Column::Subject.eq(s.as_str()));
        }
        all
    }
}

/// Page `page` (from 1) of `per_page` entries, newest first, and how many
/// match in all.
pub async fn page(
    db: &Db,
    filter: &Filter,
    page: u64,
    per_page: u64,
) -> Result<(Vec<entity::Model>, u64), DbErr> {
    let total = entity::Entity::find()
        .filter(filter.condition())
        .count(db.read())
        .await?;
    let rows = entity::Entity::find()
        .filter(filter.condition())
        .order_by_desc(entity::Column::Id)
        .offset(page.saturating_sub(1) * per_page)
        .limit(per_page)
        .all(db.read())
        .await?;
    Ok((rows, total))
}
