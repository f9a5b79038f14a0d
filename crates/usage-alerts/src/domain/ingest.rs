//! Event ingestion with group commit.
//!
//! Requests hand their validated event to one writer task and wait for its
//! commit. The writer takes every event waiting (up to `MAX_BATCH`) and
//! writes them in one transaction, in the documented order: store the events,
//! update each user's per-day aggregate (cost, tokens, distinct sessions),
//! load preferences, compare, and record the alerts crossed — each at most
//! once per user, UTC day and threshold type — with their pushes enqueued as
//! durable jobs. Only then does any request get its answer, with its own
//! running total (the day's cost including its event, as if the events had
//! been written one by one). The cost of an event does not depend on how many
//! events are stored: every statement touches the aggregates by key.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};
use keel_platform::batch::{BatchError, Batcher};
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::{Alias, Expr, OnConflict};
use keel_platform::sea_orm::{
    ColumnTrait, DatabaseTransaction, DbErr, EntityTrait, ExprTrait, QueryFilter, Set,
};

use keel_platform::tasks::Tasks;

use super::event::NewEvent;
use super::thresholds::{self, Figures, Kind, ThresholdConfig};
use crate::entity::delivery::DeliveryStatus;
use crate::entity::{alert, daily_total, day_session, delivery, device, event, preferences};
use crate::jobs::deliver_alert;

/// Events written in one transaction at most.
pub const MAX_BATCH: usize = 256;

/// The handle requests submit events through.
#[derive(Clone)]
pub struct Ingestor {
    batcher: Batcher<NewEvent, f64>,
}

impl Ingestor {
    /// Starts the writer, one of the server's tasks.
    pub fn start(db: Db, tasks: &Tasks) -> Self {
        let batcher = Batcher::start(
            tasks,
            "usage-alerts events",
            MAX_BATCH,
            move |events: Vec<NewEvent>| {
                let db = db.clone();
                async move { write_batch(&db, &events, Utc::now()).await }
            },
        );
        Self { batcher }
    }

    /// Stores the event; answers the user's cost for the current UTC day,
    /// this event included, once it is committed.
    pub async fn submit(&self, event: NewEvent) -> Result<f64, BatchError> {
        self.batcher.submit(event).await
    }
}

pub fn day_of(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d").to_string()
}

/// Writes `events` in one transaction; each event's running day cost.
pub async fn write_batch(
    db: &Db,
    events: &[NewEvent],
    now: DateTime<Utc>,
) -> Result<Vec<f64>, DbErr> {
    let day = day_of(now);
    let txn = db.begin_write().await?;
    insert_events(&txn, events, now).await?;
    let new_sessions = insert_day_sessions(&txn, events, &day).await?;
    let finals = upsert_totals(&txn, events, &day, &new_sessions).await?;
    let prefs = load_preferences(&txn, events).await?;
    let (running, crossings) = replay(events, &finals, &new_sessions, &prefs);
    record_alerts(&txn, &day, crossings, now).await?;
    txn.commit().await?;
    Ok(running)
}

async fn insert_events(
    txn: &DatabaseTransaction,
    events: &[NewEvent],
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let rows = events.iter().map(|e| e.row(now));
    event::Entity::insert_many(rows)
        .exec_without_returning(txn)
        .await?;
    Ok(())
}

/// Records the (user, session) pairs of the day; returns those new today.
async fn insert_day_sessions(
    txn: &DatabaseTransaction,
    events: &[NewEvent],
    day: &str,
) -> Result<HashSet<(String, String)>, DbErr> {
    let mut seen = HashSet::new();
    let rows: Vec<day_session::ActiveModel> = events
        .iter()
        .filter(|e| seen.insert((e.user_id.clone(), e.event.session_id.as_str().to_owned())))
        .map(|e| day_session::ActiveModel {
            user_id: Set(e.user_id.clone()),
            day: Set(day.to_owned()),
            session_id: Set(e.event.session_id.as_str().to_owned()),
        })
        .collect();
    let inserted = day_session::Entity::insert_many(rows)
        .on_conflict(
            OnConflict::columns([
                day_session::Column::UserId,
                day_session::Column::Day,
                day_session::Column::SessionId,
            ])
            .do_nothing()
            .to_owned(),
        )
        .exec_with_returning(txn)
        .await?;
    Ok(inserted
        .into_iter()
        .map(|r| (r.user_id, r.session_id))
        .collect())
}

/// Adds the batch to each user's day aggregate; the totals after it.
async fn upsert_totals(
    txn: &DatabaseTransaction,
    events: &[NewEvent],
    day: &str,
    new_sessions: &HashSet<(String, String)>,
) -> Result<HashMap<String, daily_total::Model>, DbErr> {
    let mut inc: BTreeMap<&str, (f64, i64, i64, i64)> = BTreeMap::new();
    for e in events {
        let i = inc.entry(&e.user_id).or_default();
        i.0 += e.event.cost();
        i.1 = i.1.saturating_add(e.event.tokens());
        i.3 += 1;
    }
    for (user, _) in new_sessions {
        if let Some(i) = inc.get_mut(user.as_str()) {
            i.2 += 1;
        }
    }
    let rows = inc.iter().map(
        |(user, (cost, tokens, sessions, count))| daily_total::ActiveModel {
            user_id: Set((*user).to_owned()),
            day: Set(day.to_owned()),
            cost_usd: Set(*cost),
            tokens: Set(*tokens),
            sessions: Set(*sessions),
            events: Set(*count),
        },
    );
    use daily_total::Column as C;
    let add =
        |c: C| Expr::col((daily_total::Entity, c)).add(Expr::col((Alias::new("excluded"), c)));
    let totals = daily_total::Entity::insert_many(rows)
        .on_conflict(
            OnConflict::columns([C::UserId, C::Day])
                .value(C::CostUsd, add(C::CostUsd))
                .value(C::Tokens, add(C::Tokens))
                .value(C::Sessions, add(C::Sessions))
                .value(C::Events, add(C::Events))
                .to_owned(),
        )
        .exec_with_returning(txn)
        .await?;
    Ok(totals.into_iter().map(|t| (t.user_id.clone(), t)).collect())
}

async fn load_preferences(
    txn: &DatabaseTransaction,
    events: &[NewEvent],
) -> Result<HashMap<String, Vec<ThresholdConfig>>, DbErr> {
    let users: HashSet<&str> = events.iter().map(|e| e.user_id.as_str()).collect();
    let rows = preferences::Entity::find()
        .filter(preferences::Column::UserId.is_in(users))
        .all(txn)
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|p| {
            let list = serde_json::from_str(&p.thresholds).ok()?;
            Some((p.user_id, list))
        })
        .collect())
}

/// A threshold a user's day crossed in this batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    pub user_id: String,
    pub kind: Kind,
    pub value: f64,
    pub observed: f64,
}

/// Walks the batch in order from the totals before it: each event's running
/// day cost, and the first crossing of each threshold per user.
pub fn replay(
    events: &[NewEvent],
    finals: &HashMap<String, daily_total::Model>,
    new_sessions: &HashSet<(String, String)>,
    prefs: &HashMap<String, Vec<ThresholdConfig>>,
) -> (Vec<f64>, Vec<Crossing>) {
    let mut running: HashMap<&str, Figures> = HashMap::new();
    for (user, total) in finals {
        let mut before = Figures {
            cost: total.cost_usd,
            tokens: total.tokens,
            sessions: total.sessions,
        };
        for e in events.iter().filter(|e| &e.user_id == user) {
            before.cost -= e.event.cost();
            before.tokens -= e.event.tokens();
        }
        before.sessions -=
            i64::try_from(new_sessions.iter().filter(|(u, _)| u == user).count()).unwrap_or(0);
        running.insert(user.as_str(), before);
    }
    let mut counted: HashSet<(&str, &str)> = HashSet::new();
    let mut out = Vec::with_capacity(events.len());
    let mut crossings: Vec<Crossing> = Vec::new();
    for e in events {
        let fig = running.entry(e.user_id.as_str()).or_default();
        fig.cost += e.event.cost();
        fig.tokens = fig.tokens.saturating_add(e.event.tokens());
        let pair = (e.user_id.clone(), e.event.session_id.as_str().to_owned());
        if new_sessions.contains(&pair)
            && counted.insert((e.user_id.as_str(), e.event.session_id.as_str()))
        {
            fig.sessions += 1;
        }
        out.push(fig.cost);
        let effective = thresholds::effective(prefs.get(&e.user_id).map(Vec::as_slice));
        for (kind, value, observed) in thresholds::crossed(&effective, fig) {
            if !crossings
                .iter()
                .any(|c| c.user_id == e.user_id && c.kind == kind)
            {
                crossings.push(Crossing {
                    user_id: e.user_id.clone(),
                    kind,
                    value,
                    observed,
                });
            }
        }
    }
    (out, crossings)
}

/// Records the crossings not yet alerted today, with a pending delivery
/// (and its job) per device of the user.
async fn record_alerts(
    txn: &DatabaseTransaction,
    day: &str,
    crossings: Vec<Crossing>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    if crossings.is_empty() {
        return Ok(());
    }
    let rows = crossings.into_iter().map(|c| alert::ActiveModel {
        id: Set(uuid::Uuid::now_v7().to_string()),
        user_id: Set(c.user_id),
        day: Set(day.to_owned()),
        threshold_type: Set(c.kind),
        threshold_value: Set(c.value),
        observed: Set(c.observed),
        note: Set(None),
        created_at: Set(now),
    });
    let new_alerts = alert::Entity::insert_many(rows)
        .on_conflict(
            OnConflict::columns([
                alert::Column::UserId,
                alert::Column::Day,
                alert::Column::ThresholdType,
            ])
            .do_nothing()
            .to_owned(),
        )
        .exec_with_returning(txn)
        .await?;
    if new_alerts.is_empty() {
        return Ok(());
    }
    let users: HashSet<&str> = new_alerts.iter().map(|a| a.user_id.as_str()).collect();
    let devices = device::Entity::find()
        .filter(device::Column::UserId.is_in(users))
        .all(txn)
        .await?;
    for a in &new_alerts {
        let mine: Vec<&device::Model> = devices.iter().filter(|d| d.user_id == a.user_id).collect();
        if mine.is_empty() {
            tracing::info!(alert = %a.id, user = %a.user_id, "threshold crossed; no registered devices");
            alert::Entity::update_many()
                .col_expr(alert::Column::Note, Expr::value("no registered devices"))
                .filter(alert::Column::Id.eq(a.id.as_str()))
                .exec(txn)
                .await?;
            continue;
        }
        for d in mine {
            delivery::Entity::insert(delivery::ActiveModel {
                alert_id: Set(a.id.clone()),
                device_token: Set(d.device_token.clone()),
                platform: Set(d.platform),
                sandbox: Set(d.sandbox),
                status: Set(DeliveryStatus::Pending),
                reason: Set(None),
                apns_id: Set(None),
                updated_at: Set(now),
            })
            .exec_without_returning(txn)
            .await?;
            deliver_alert::enqueue(txn, &a.id, &d.device_token, now).await?;
        }
    }
    Ok(())
}
