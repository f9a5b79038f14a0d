//! The job queue, per kind; failed jobs with their error, run again or
//! discarded (one, or every failed job of a kind). The `jobs` role.

use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use keel_platform::audit::Entry;
use keel_platform::console::input::Params;
use keel_platform::console::{Error, ErrorBody, Operator, Role, invalid, not_found};
use keel_platform::http::NoStore;
use keel_platform::jobs::failed::{self, Which};
use keel_platform::jobs::gauges;
use keel_platform::values::{NotBlank, Text};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::{IntoParams, ToSchema};

use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct KindRow {
    pub kind: String,
    /// Queued, due or later, running or not.
    pub queued: u64,
    /// Due and waiting for a worker.
    pub due: u64,
    pub running: u64,
    /// Gave up; kept until retried or discarded.
    pub failed: u64,
    /// How long the oldest due job has waited, in seconds.
    pub oldest_due_secs: f64,
}

#[derive(Serialize, ToSchema)]
pub struct FailedJob {
    pub id: i64,
    pub kind: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    /// When it last ran (its last try).
    pub last_run_at: DateTime<Utc>,
}

#[derive(Serialize, ToSchema)]
pub struct Jobs {
    pub kinds: Vec<KindRow>,
    /// The newest failed jobs (at most 100), of `kind` when asked.
    pub failed: Vec<FailedJob>,
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct JobsQuery {
    /// Only this kind's failed jobs.
    #[param(inline)]
    pub kind: Option<Text<100, NotBlank>>,
}

#[derive(Serialize, ToSchema)]
pub struct Changed {
    /// How many jobs the action took.
    pub jobs: u64,
}

/// Every kind's figures and the newest failed jobs.
#[utoipa::path(get, path = "/console/v1/jobs", tag = "jobs",
    security(("console_session" = [])),
    params(JobsQuery),
    responses(
        (status = 200, body = Jobs),
        (status = 400, description = "invalid_input", body = ErrorBody),
        (status = 401, description = "not_signed_in", body = ErrorBody),
        (status = 403, description = "forbidden: the operator lacks the jobs role", body = ErrorBody),
    ))]
pub async fn list(
    State(state): State<AppState>,
    op: Operator,
    Params(q): Params<JobsQuery>,
) -> Result<NoStore<Json<Jobs>>, Error> {
    op.require(Role::Jobs)?;
    let db = &state.platform.db;
    let kinds = gauges::read(db, &state.job_kinds)
        .await?
        .into_iter()
        .map(|(kind, f)| KindRow {
            kind,
            queued: f.queued,
            due: f.due,
            running: f.running,
            failed: f.failed,
            oldest_due_secs: f.oldest_due_secs,
        })
        .collect();
    let failed = failed::list(db, q.kind.as_ref().map(Text::as_str), 100)
        .await?
        .into_iter()
        .map(|j| FailedJob {
            id: j.id,
            kind: j.kind,
            attempts: j.attempts,
            last_error: j.last_error,
            created_at: j.created_at,
            last_run_at: j.run_at,
        })
        .collect();
    Ok(NoStore(Json(Jobs { kinds, failed })))
}

async fn act(state: &AppState, op: &Operator, which: Which<'_>, retry: bool) -> Result<u64, Error> {
    op.require(Role::Jobs)?;
    let db = &state.platform.db;
    let n = if retry {
        failed::retry(db, which, &state.platform.jobs_wake).await?
    } else {
        failed::discard(db, which).await?
    };
    let (action, subject) = match (retry, which) {
        (true, Which::One(id)) => ("job_retried", id.to_string()),
        (false, Which::One(id)) => ("job_discarded", id.to_string()),
        (true, Which::Kind(k)) => ("jobs_of_kind_retried", k.to_owned()),
        (false, Which::Kind(k)) => ("jobs_of_kind_discarded", k.to_owned()),
    };
    if n > 0 {
        let entry = Entry::new(crate::NAME, action)
            .on(subject)
            .detail(json!({ "jobs": n }));
        op.record(db, entry).await;
    }
    Ok(n)
}

/// A job id from the path (axum's own refusal would not be in the
/// console's shape).
fn job_id(raw: &str) -> Result<i64, Error> {
    raw.parse()
        .map_err(|_| invalid(format!("{raw:?} is not a job id (a whole number).")))
}

fn one(n: u64) -> Result<Json<Changed>, Error> {
    if n == 0 {
        return Err(not_found("failed job"));
    }
    Ok(Json(Changed { jobs: n }))
}

/// Run a failed job again now, with one more attempt.
#[utoipa::path(post, path = "/console/v1/jobs/{id}/retry", tag = "jobs",
    security(("console_session" = [], "console_csrf" = [])),
    params(("id" = i64, Path, description = "The failed job")),
    responses(
        (status = 200, body = Changed),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 400, description = "invalid_input: the id is not a whole number", body = ErrorBody),
        (status = 404, description = "not_found: no failed job has this id", body = ErrorBody),
    ))]
pub async fn retry(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
) -> Result<Json<Changed>, Error> {
    one(act(&state, &op, Which::One(job_id(&id)?), true).await?)
}

/// Discard a failed job for good.
#[utoipa::path(post, path = "/console/v1/jobs/{id}/discard", tag = "jobs",
    security(("console_session" = [], "console_csrf" = [])),
    params(("id" = i64, Path, description = "The failed job")),
    responses(
        (status = 200, body = Changed),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 400, description = "invalid_input: the id is not a whole number", body = ErrorBody),
        (status = 404, description = "not_found: no failed job has this id", body = ErrorBody),
    ))]
pub async fn discard(
    State(state): State<AppState>,
    op: Operator,
    Path(id): Path<String>,
) -> Result<Json<Changed>, Error> {
    one(act(&state, &op, Which::One(job_id(&id)?), false).await?)
}

/// Run every failed job of a kind again.
#[utoipa::path(post, path = "/console/v1/jobs/kinds/{kind}/retry", tag = "jobs",
    security(("console_session" = [], "console_csrf" = [])),
    params(("kind" = String, Path, description = "The job kind")),
    responses((status = 200, body = Changed), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn retry_kind(
    State(state): State<AppState>,
    op: Operator,
    Path(kind): Path<String>,
) -> Result<Json<Changed>, Error> {
    Ok(Json(Changed {
        jobs: act(&state, &op, Which::Kind(&kind), true).await?,
    }))
}

/// Discard every failed job of a kind.
#[utoipa::path(post, path = "/console/v1/jobs/kinds/{kind}/discard", tag = "jobs",
    security(("console_session" = [], "console_csrf" = [])),
    params(("kind" = String, Path, description = "The job kind")),
    responses((status = 200, body = Changed), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn discard_kind(
    State(state): State<AppState>,
    op: Operator,
    Path(kind): Path<String>,
) -> Result<Json<Changed>, Error> {
    Ok(Json(Changed {
        jobs: act(&state, &op, Which::Kind(&kind), false).await?,
    }))
}
