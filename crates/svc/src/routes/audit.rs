//! GET /admin/audit.

use axum::extract::{Query, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use keel_platform::sea_orm::{
    ColumnTrait, Condition, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};
use keel_platform::time::millis;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::paging::{Paging, paged, query, text_filter};
use crate::auth::Admin;
use crate::entity::audit;
use crate::error::Error;
use crate::routes::failures::*;
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct AuditEntry {
    id: i64,
    event: String,
    app_id: String,
    form_id: Option<String>,
    /// SHA-256 of the App Check token.
    token_hash: String,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    created_at: DateTime<Utc>,
}

/// Which entries: every one, or those of one event and/or one form.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditFilter {
    /// Only this event (`svc_forms_appcheck_verified`: an App Check token
    /// verified for a submission); empty or absent: every event.
    #[param(max_length = 100)]
    event: Option<String>,
    /// Only entries about this form; empty or absent: any.
    #[param(max_length = 100)]
    form_id: Option<String>,
}

impl AuditFilter {
    fn condition(&self) -> Result<Condition, Error> {
        let mut all = Condition::all();
        if let Some(event) = text_filter("event", self.event.as_deref(), 100)? {
            all = all.add(audit::Column::Event.eq(event));
        }
        if let Some(form) = text_filter("form_id", self.form_id.as_deref(), 100)? {
            all = all.add(audit::Column::FormId.eq(form));
        }
        Ok(all)
    }
}

#[derive(Serialize, ToSchema)]
pub struct AuditPage {
    entries: Vec<AuditEntry>,
    total: u64,
    page: u64,
    per_page: u64,
}

/// The audit log, newest first; filtered by event and form when asked.
#[utoipa::path(get, path = "/admin/audit", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(AuditFilter, Paging),
    responses((status = 200, body = AuditPage), BadPage, NotAdmin))]
pub async fn audit_log(
    State(state): State<AppState>,
    _admin: Admin,
    q: Result<Query<Paging>, axum::extract::rejection::QueryRejection>,
    f: Result<Query<AuditFilter>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, Error> {
    let (page, per_page) = query(q)?.get()?;
    let only = query(f)?.condition()?;
    let total = audit::Entity::find()
        .filter(only.clone())
        .count(state.db.read())
        .await?;
    let rows = audit::Entity::find()
        .filter(only)
        .order_by_desc(audit::Column::Id)
        .offset((page - 1) * per_page)
        .limit(per_page)
        .all(state.db.read())
        .await?;
    let entries = rows
        .into_iter()
        .map(|a| AuditEntry {
            id: a.id,
            event: a.event,
            app_id: a.app_id,
            form_id: a.form_id,
            token_hash: a.token_hash,
            created_at: a.created_at,
        })
        .collect();
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
