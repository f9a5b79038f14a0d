//! POST /send, GET and DELETE /send/{id}, GET /sends, POST
//! /recipients/count.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use keel_platform::audit::Entry;
use keel_platform::http::Json;
use keel_platform::time::millis;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

use crate::auth::{Admin, Push};
use crate::domain::ids::SendId;
use crate::domain::push::idempotency::IdempotencyKey;
use crate::domain::push::progress::{self, Progress, SendStatus};
use crate::domain::push::request::{Filters, SendBody, SendRequest, Target};
use crate::domain::push::send;
use crate::entity::push_send;
use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::input::{AnyBody, Body};
use crate::routes::failures::*;
use crate::routes::paging::{Paging, paged, query};
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct SendView {
    id: String,
    /// `scheduled`, `queued`, `sending`, `sent` or `cancelled`.
    status: SendStatus,
    recipients: i64,
    title: String,
    body: String,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    send_at: chrono::DateTime<Utc>,
    local_time: Option<String>,
    /// Who it was made for: the filters given (none: every active device).
    audience: Audience,
    progress: Progress,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    created_at: chrono::DateTime<Utc>,
}

/// A send's target as made, with its push tokens counted, not listed.
#[derive(Serialize, ToSchema, Default)]
pub struct Audience {
    #[serde(skip_serializing_if = "Option::is_none")]
    device_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    locale: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    app_version: Option<String>,
    /// How many push tokens the target named, when it named some.
    #[serde(skip_serializing_if = "Option::is_none")]
    push_tokens: Option<usize>,
}

impl Audience {
    /// The stored target (the JSON of its [`Target`]); what cannot be read
    /// is no filter.
    fn of(stored: &str) -> Self {
        let t: Target = serde_json::from_str(stored).unwrap_or_default();
        Self {
            device_type: t.device_type,
            locale: t.locale,
            app_version: t.app_version,
            push_tokens: t.push_tokens.as_ref().map(Vec::len),
        }
    }
}

fn view(s: push_send::Model) -> SendView {
    let progress = Progress::of(&s);
    SendView {
        audience: Audience::of(&s.target),
        status: progress::status_of(&s, &progress, Utc::now()),
        id: s.id,
        recipients: s.recipients,
        title: s.title,
        body: s.body,
        send_at: s.send_at,
        local_time: s.local_time,
        progress,
        created_at: s.created_at,
    }
}

#[derive(Serialize, ToSchema)]
pub struct SendAccepted {
    id: String,
    status: SendStatus,
    recipients: i64,
}

/// The request header that makes a send safe to retry.
const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// The answer header that says it repeats an earlier answer.
const REPLAYED: &str = "idempotent-replayed";

/// Send or schedule a notification. With an `Idempotency-Key`, a retry of
/// the same request within 24 hours answers the first answer again (with
/// `Idempotent-Replayed: true`) and sends nothing more.
#[utoipa::path(post, path = "/send", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(
        ("Idempotency-Key" = Option<String>, Header, max_length = 255, pattern = "^[!-~]{1,255}$",
            description = "A key of the client's choosing (a UUID): the same key from the same admin within 24 hours answers the first send's answer and sends nothing more; with a different request it is 422"),
    ),
    request_body(description = "JSON. Form fields are read too (urlencoded with bracketed keys, `target[push_tokens][]=...`, or multipart with `data` and `target` as JSON parts), though a form cannot say `null`", content(
        (SendBody = "application/json"),
    )),
    responses(
        (status = 202, body = SendAccepted, headers(
            ("Idempotent-Replayed" = String, description = "`true` when this repeats the answer to an earlier request with the same Idempotency-Key"),
        )),
        (status = 400, description = format!("{REST_INVALID_PARAM} or {REST_MISSING_PARAM} naming the field; {NO_RECIPIENTS} when no active device matches the target (nothing is stored)"), body = ErrorBody),
        NotPushAdmin,
        (status = 422, description = IDEMPOTENCY_KEY_REUSED, body = ErrorBody),
    ))]
pub async fn send_notification(
    State(state): State<AppState>,
    admin: Admin<Push>,
    headers: HeaderMap,
    AnyBody(body): AnyBody<SendBody>,
) -> Result<Response, Error> {
    let key = headers
        .get(IDEMPOTENCY_KEY)
        .map(|v| IdempotencyKey::parse(v.as_bytes()))
        .transpose()
        .map_err(|e| error::invalid_param(e.to_string()))?;
    let req = SendRequest::from(body);
    let made = send::create(&state.db, req, admin.sender(), key.as_ref()).await?;
    let accepted = Json(SendAccepted {
        status: made.status,
        id: made.send.id.clone(),
        recipients: made.send.recipients,
    });
    if made.replayed {
        return Ok((StatusCode::ACCEPTED, [(REPLAYED, "true")], accepted).into_response());
    }
    let entry = Entry::new(crate::NAME, "svc_send_created").on(&made.send.id);
    let detail = json!({
        "title": made.send.title, "recipients": made.send.recipients,
        "send_at": made.send.send_at.to_rfc3339(), "local_time": made.send.local_time,
    });
    admin.record(&state, entry.detail(detail)).await;
    state.platform.wake_jobs();
    Ok((StatusCode::ACCEPTED, accepted).into_response())
}

/// A send's progress.
#[utoipa::path(get, path = "/send/{id}", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, body = SendView),
        (status = 403, description = PUSH_FORBIDDEN, body = ErrorBody),
        (status = 404, description = format!("{SEND_NOT_FOUND}, or {REST_NO_ROUTE}: the push module is off"), body = ErrorBody),
    ))]
pub async fn get_send(
    State(state): State<AppState>,
    _admin: Admin<Push>,
    Path(id): Path<String>,
) -> Result<Json<SendView>, Error> {
    let id = SendId::parse(&id).ok_or_else(error::no_such_send)?;
    let s = send::find(&state.db, id.as_str())
        .await?
        .ok_or_else(error::no_such_send)?;
    Ok(Json(view(s)))
}

#[derive(Serialize, ToSchema)]
pub struct Cancelled {
    id: String,
    status: SendStatus,
    /// Messages stopped: those not yet handed to Expo. A batch already on
    /// its way when the cancel came stores what Expo answered, so a few
    /// of these may still end sent; GET /send/{id}'s `progress` says how
    /// each ended.
    cancelled: u64,
}

/// Cancel what has not been handed to Expo yet.
#[utoipa::path(delete, path = "/send/{id}", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, body = Cancelled),
        NotPushAdmin,
        (status = 409, description = NOT_CANCELLABLE, body = ErrorBody),
    ))]
pub async fn cancel_send(
    State(state): State<AppState>,
    admin: Admin<Push>,
    Path(id): Path<String>,
) -> Result<Json<Cancelled>, Error> {
    let id = SendId::parse(&id).ok_or_else(error::no_such_send)?;
    let cancelled = send::cancel(&state.db, id.as_str()).await?;
    let entry = Entry::new(crate::NAME, "svc_send_cancelled").on(id.as_str());
    admin
        .record(&state, entry.detail(json!({"cancelled": cancelled})))
        .await;
    Ok(Json(Cancelled {
        id: id.into_string(),
        status: SendStatus::Cancelled,
        cancelled,
    }))
}

#[derive(Serialize, ToSchema)]
pub struct SendPage {
    sends: Vec<SendView>,
    total: u64,
    total_pages: u64,
    page: u64,
    per_page: u64,
}

/// Every send, newest first, a page at a time (`X-WP-Total`,
/// `X-WP-TotalPages`); each as GET /send/{id} shows it.
#[utoipa::path(get, path = "/sends", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(Paging),
    responses(
        (status = 200, body = SendPage, headers(
            ("X-WP-Total" = u64, description = "How many sends there are"),
            ("X-WP-TotalPages" = u64, description = "How many pages of `per_page`"),
        )),
        BadPage,
        NotPushAdmin,
    ))]
pub async fn list_sends(
    State(state): State<AppState>,
    _admin: Admin<Push>,
    q: Result<Query<Paging>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, Error> {
    let (page, per_page) = query(q)?.get()?;
    let (rows, total) = send::page(&state.db, page, per_page).await?;
    let body = SendPage {
        sends: rows.into_iter().map(view).collect(),
        total,
        total_pages: total.div_ceil(per_page),
        page,
        per_page,
    };
    Ok(paged(body, total, per_page))
}

/// What POST /recipients/count reads: the `target` POST /send takes,
/// required here (`"all"` or `null` for every active device).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CountBody {
    #[schema(value_type = Option<Filters>, required = true)]
    target: Target,
}

#[derive(Serialize, ToSchema)]
pub struct RecipientCount {
    /// The active devices a send with this target would reach now.
    recipients: u64,
}

/// How many devices a send with this target would reach if it were made
/// now; sends nothing. (A POST because `push_tokens` may hold 10,000
/// tokens, too many for a query string.)
#[utoipa::path(post, path = "/recipients/count", tag = "push", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    request_body(content((CountBody = "application/json"))),
    responses(
        (status = 200, body = RecipientCount),
        (status = 400, body = ErrorBody),
        NotPushAdmin,
    ))]
pub async fn count_recipients(
    State(state): State<AppState>,
    _admin: Admin<Push>,
    Body(body): Body<CountBody>,
) -> Result<Json<RecipientCount>, Error> {
    let recipients = send::recipients(&state.db, &body.target).await?;
    Ok(Json(RecipientCount { recipients }))
}
