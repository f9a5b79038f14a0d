//! GET /admin/audit.

use axum::extract::{Query, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use keel_platform::sea_orm::{EntityTrait, PaginatorTrait, QueryOrder, QuerySelect};
use keel_platform::time::millis;
use serde::Serialize;
use utoipa::ToSchema;

use super::paging::{Paging, paged, paging_query};
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

#[derive(Serialize, ToSchema)]
pub struct AuditPage {
    entries: Vec<AuditEntry>,
    total: u64,
    page: u64,
    per_page: u64,
}

/// The audit log, newest first.
#[utoipa::path(get, path = "/admin/audit", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(Paging),
    responses((status = 200, body = AuditPage), BadPage, NotAdmin))]
pub async fn audit_log(
    State(state): State<AppState>,
    _admin: Admin,
    q: Result<Query<Paging>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, Error> {
    let (page, per_page) = paging_query(q)?.get()?;
    let total = audit::Entity::find().count(state.db.read()).await?;
    let rows = audit::Entity::find()
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
