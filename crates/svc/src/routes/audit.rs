//! GET /admin/audit: svc's part of the platform's one audit log.

use axum::extract::{Query, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use keel_platform::audit::{self, Filter};
use keel_platform::time::millis;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::paging::{Paging, paged, query, text_filter};
use crate::auth::{Admin, Own};
use crate::domain::hooks::APPCHECK_VERIFIED;
use crate::error::Error;
use crate::routes::failures::*;
use crate::state::AppState;

/// One entry: an admin's action (who, what, on what, before and after,
/// from where) or an App Check token verified for a form.
#[derive(Serialize, ToSchema)]
pub struct AuditEntry {
    id: i64,
    /// What happened: `svc_forms_appcheck_verified`, `svc_admin_signed_in`,
    /// `svc_form_created`, ... (docs/svc.md lists them).
    event: String,
    /// Who: the admin's username, `cli`, or the App Check app's id.
    actor: String,
    /// On what: a form id, a send id, a username, a setting's name.
    subject: Option<String>,
    /// The state before and after a change (settings: the values changed).
    #[schema(value_type = Option<Object>)]
    before: Option<Value>,
    #[schema(value_type = Option<Object>)]
    after: Option<Value>,
    /// Counts and such (an import's rows; a token's SHA-256).
    #[schema(value_type = Option<Object>)]
    detail: Option<Value>,
    /// The client's address, when the action came over HTTP.
    address: Option<String>,
    /// App Check entries: the app, the form and the token's SHA-256.
    app_id: Option<String>,
    form_id: Option<String>,
    token_hash: Option<String>,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    created_at: DateTime<Utc>,
}

impl From<audit::entity::Model> for AuditEntry {
    fn from(a: audit::entity::Model) -> Self {
        let json = |t: Option<String>| t.and_then(|t| serde_json::from_str::<Value>(&t).ok());
        let detail = json(a.detail);
        let appcheck = a.action == APPCHECK_VERIFIED;
        Self {
            id: a.id,
            app_id: appcheck.then(|| a.actor.clone()),
            form_id: appcheck.then(|| a.subject.clone()).flatten(),
            token_hash: detail
                .as_ref()
                .and_then(|d| d["token_hash"].as_str())
                .map(str::to_owned),
            event: a.action,
            actor: a.actor,
            subject: a.subject,
            before: json(a.before),
            after: json(a.after),
            detail,
            address: a.address,
            created_at: a.at,
        }
    }
}

/// Which entries: every one, or those of one event, one actor, one form.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditFilter {
    /// Only this event; empty or absent: every event.
    #[param(max_length = 100)]
    event: Option<String>,
    /// Only what this admin (username), app or `cli` did; empty or absent: anyone.
    #[param(max_length = 200)]
    actor: Option<String>,
    /// Only entries about this form (App Check checks and the form's
    /// changes); empty or absent: any.
    #[param(max_length = 100)]
    form_id: Option<String>,
}

impl AuditFilter {
    fn filter(&self) -> Result<Filter, Error> {
        let owned = |v: Option<&str>| v.map(str::to_owned);
        Ok(Filter {
            service: Some(crate::NAME),
            action: owned(text_filter("event", self.event.as_deref(), 100)?),
            actor: owned(text_filter("actor", self.actor.as_deref(), 200)?),
            subject: owned(text_filter("form_id", self.form_id.as_deref(), 100)?),
        })
    }
}

#[derive(Serialize, ToSchema)]
pub struct AuditPage {
    entries: Vec<AuditEntry>,
    total: u64,
    page: u64,
    per_page: u64,
}

/// The audit log, newest first; filtered by event, actor and form when asked.
#[utoipa::path(get, path = "/admin/audit", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(AuditFilter, Paging),
    responses((status = 200, body = AuditPage), BadPage, NotAdmin))]
pub async fn audit_log(
    State(state): State<AppState>,
    _admin: Admin<Own>,
    q: Result<Query<Paging>, axum::extract::rejection::QueryRejection>,
    f: Result<Query<AuditFilter>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, Error> {
    let (page, per_page) = query(q)?.get()?;
    let filter = query(f)?.filter()?;
    let (rows, total) = audit::page(&state.db, &filter, page, per_page).await?;
    let entries = rows.into_iter().map(AuditEntry::from).collect();
    Ok(paged(
        AuditPage {
            entries,
            total,
            page,
            per_page,
        },
        total,
        per_page,
    ))
}
