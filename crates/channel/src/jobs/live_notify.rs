//! The live notification: one post to the chat community's Discord
//! webhook per live start, enqueued in the same transaction as the start
//! (so exactly one exists per start, whatever redelivers the event or
//! dies). Network errors and 5xx are retried with backoff, a 429 after its
//! `retry_after`; a 404 (the webhook was deleted) or another refusal stops.
//! Posting twice is possible only if the process dies between Discord's
//! answer and the commit that records it (one request's window).

use chrono::DateTime;
use chrono::Utc;
use keel_platform::jobs::{self, Job, JobContext, JobError, JobRegistry};
use keel_platform::outbound::{remote_wait, retry_after};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Deps;
use crate::domain::channel::{self, logo_url};
use crate::entity::stream_session;

#[derive(Debug, Serialize, Deserialize)]
pub struct LiveNotify {
    pub session_id: String,
}

impl Job for LiveNotify {
    const KIND: &'static str = "channel.live_notify";
    const MAX_ATTEMPTS: u32 = 12;
}

/// Enqueues the notification of `session_id`, due `at` (once per session).
pub async fn enqueue<C: ConnectionTrait>(
    conn: &C,
    session_id: &str,
    at: DateTime<Utc>,
) -> Result<(), DbErr> {
    let job = LiveNotify {
        session_id: session_id.to_owned(),
    };
    jobs::enqueue_unique(conn, &job, &format!("channel:live-notify:{session_id}"), at).await?;
    Ok(())
}

pub fn register(registry: &mut JobRegistry, d: Deps) {
    registry.register(move |job: LiveNotify, _ctx: JobContext| {
        let d = d.clone();
        async move { run(&d, &job.session_id).await }
    });
}

/// The longest a 429's `retry_after` is waited for before trying again.
const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(3600);

/// Discord asks HTTP API clients to name themselves `DiscordBot ($url,
/// $version)`.
const USER_AGENT: &str = concat!("DiscordBot (keel, ", env!("CARGO_PKG_VERSION"), ")");

/// Discord's limits.
const CONTENT_MAX: usize = 2000;
const TITLE_MAX: usize = 256;
const DESCRIPTION_MAX: usize = 4096;

fn cut(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

async fn run(d: &Deps, session_id: &str) -> Result<(), JobError> {
    let Some(session) = stream_session::Entity::find_by_id(session_id)
        .one(d.db.read())
        .await?
        .filter(|s| s.notified_at.is_none())
    else {
        return Ok(()); // sent already
    };
    let Some(url) = d.cfg.notify.webhook_url.as_ref() else {
        tracing::info!(
            session = session_id,
            "live: no KEEL_CHANNEL_LIVE_WEBHOOK_URL, no notification"
        );
        return mark(d, session_id).await;
    };
    if let Some(why) = skip_reason(d, &session).await? {
        tracing::info!(session = session_id, why, "live notification skipped");
        return mark(d, session_id).await;
    }
    let body = message(d).await?;
    let req = d
        .http
        .client()
        .post(url.expose())
        .query(&[("wait", "true")])
        .header(reqwest::header::USER_AGENT, USER_AGENT)
        .json(&body);
    let resp = d
        .http
        .send(req)
        .await
        .map_err(|e| JobError::retry(format!("Discord: {e}")))?;
    let status = resp.status();
    if status.is_success() {
        tracing::info!(session = session_id, "live notification posted");
        return mark(d, session_id).await;
    }
    let header_wait = retry_after(&resp);
    let answer: Value = resp.json().await.unwrap_or(Value::Null);
    let reason = format!("Discord answered {status}: {answer}");
    if status.as_u16() == 429 {
        let wait = answer["retry_after"]
            .as_f64()
            .and_then(|s| remote_wait(s, MAX_WAIT))
            .or(header_wait)
            .unwrap_or(std::time::Duration::from_secs(1));
        return Err(JobError::retry_after(reason, wait));
    }
    if status.is_server_error() {
        return Err(JobError::retry(reason));
    }
    Err(JobError::fail(reason))
}

/// Why this start gets no notification, if it does not.
async fn skip_reason(d: &Deps, s: &stream_session::Model) -> Result<Option<&'static str>, DbErr> {
    if s.ended_at.is_some() {
        return Ok(Some("the stream ended before the notification was due"));
    }
    let window = chrono::Duration::from_std(d.cfg.notify.skip_within).unwrap_or_default();
    if window.is_zero() {
        return Ok(None);
    }
    let previous = stream_session::Entity::find()
        .filter(stream_session::Column::StartedAt.lt(s.started_at))
        .order_by_desc(stream_session::Column::StartedAt)
        .one(d.db.read())
        .await?;
    let recent = previous
        .and_then(|p| p.ended_at)
        .is_some_and(|ended| s.started_at - ended < window);
    Ok(recent.then_some("the previous stream ended only just before"))
}

/// The post: a line with the channel's URL, and an embed with its title,
/// description and logo.
async fn message(d: &Deps) -> Result<Value, DbErr> {
    let c = channel::config(&d.db).await?;
    let page = d.cfg.public_url.as_str().trim_end_matches('/').to_owned();
    let title = if c.title.trim().is_empty() {
        "The channel".to_owned()
    } else {
        c.title.clone()
    };
    let mut embed = json!({
        "title": cut(&title, TITLE_MAX),
        "url": page,
        "color": 0xE0_2F_44,
    });
    if !c.description.trim().is_empty() {
        embed["description"] = Value::from(cut(&c.description, DESCRIPTION_MAX));
    }
    if let Some(hash) = &c.logo_hash {
        embed["thumbnail"] = json!({"url": format!("{page}{}", logo_url(hash))});
    }
    Ok(json!({
        "content": cut(&format!("🔴 {title} is live now: {page}"), CONTENT_MAX),
        "embeds": [embed],
        "allowed_mentions": {"parse": []},
    }))
}

async fn mark(d: &Deps, session_id: &str) -> Result<(), JobError> {
    stream_session::Entity::update_many()
        .col_expr(stream_session::Column::NotifiedAt, Expr::value(Utc::now()))
        .filter(stream_session::Column::Id.eq(session_id))
        .filter(stream_session::Column::NotifiedAt.is_null())
        .exec(d.db.write())
        .await?;
    Ok(())
}
