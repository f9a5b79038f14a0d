//! A form's submissions: a page at a time, or all as CSV.

use axum::extract::{Path, Query, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use keel_platform::time::millis;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::download;
use super::paging::{Paging, paged, query};
use crate::auth::Admin;
use crate::domain::ids::FormId;
use crate::domain::site;
use crate::error::{self, Error};
use crate::routes::failures::*;
use crate::state::AppState;
use keel_platform::csv_out;

#[derive(Serialize, ToSchema)]
pub struct SubmissionView {
    id: i64,
    form_id: String,
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    values: Value,
    app_id: String,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    created_at: DateTime<Utc>,
}

#[derive(Serialize, ToSchema)]
pub struct SubmissionPage {
    submissions: Vec<SubmissionView>,
    total: u64,
    total_pages: u64,
    page: u64,
    per_page: u64,
}

/// A form's submissions, newest first (`X-WP-Total`, `X-WP-TotalPages`).
#[utoipa::path(get, path = "/admin/forms/{form_id}/submissions", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("form_id" = String, Path), Paging),
    responses((status = 200, body = SubmissionPage), BadPage, NotAdmin, NoSuchForm))]
pub async fn list_submissions(
    State(state): State<AppState>,
    _admin: Admin,
    Path(form_id): Path<String>,
    q: Result<Query<Paging>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, Error> {
    let form_id = FormId::parse(&form_id).ok_or_else(error::no_such_form)?;
    let (page, per_page) = query(q)?.get()?;
    site::get_form(&state.db, form_id.as_str())
        .await?
        .ok_or_else(error::no_such_form)?;
    let (rows, total) = site::submissions(&state.db, form_id.as_str(), page, per_page).await?;
    let submissions = rows
        .into_iter()
        .map(|r| SubmissionView {
            values: serde_json::from_str(&r.field_values).unwrap_or(Value::Null),
            id: r.id,
            form_id: r.form_id,
            app_id: r.app_id,
            created_at: r.created_at,
        })
        .collect();
    let body = SubmissionPage {
        submissions,
        total,
        total_pages: total.div_ceil(per_page),
        page,
        per_page,
    };
    Ok(paged(body, total, per_page))
}

/// A form's submissions as CSV (streamed; formula cells neutralised).
#[utoipa::path(get, path = "/admin/forms/{form_id}/submissions/export", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("form_id" = String, Path)),
    responses(
        (status = 200, description = "text/csv: id, created_at, app_id, then one column per field", content_type = "text/csv"),
        NotAdmin, NoSuchForm,
    ))]
pub async fn export_submissions(
    State(state): State<AppState>,
    _admin: Admin,
    Path(form_id): Path<String>,
) -> Result<Response, Error> {
    let form_id = FormId::parse(&form_id).ok_or_else(error::no_such_form)?;
    let def = site::get_form(&state.db, form_id.as_str())
        .await?
        .ok_or_else(error::no_such_form)?;
    let field_ids: Vec<String> = def.fields.iter().map(|f| f.id.clone()).collect();
    let header = {
        let mut h = vec![
            "id".to_owned(),
            "created_at".to_owned(),
            "app_id".to_owned(),
        ];
        h.extend(field_ids.iter().cloned());
        csv_out::record(h)
    };
    let db = state.db.clone();
    let pages = futures::stream::unfold(Some(0i64), move |after| {
        let (db, form_id, field_ids) = (db.clone(), form_id.clone(), field_ids.clone());
        async move {
            let after = after?;
            match site::submissions_after(&db, form_id.as_str(), after, 500).await {
                Err(e) => Some((Err(std::io::Error::other(e.to_string())), None)),
                Ok(rows) if rows.is_empty() => None,
                Ok(rows) => {
                    let last = rows.last().map_or(after, |r| r.id);
                    let mut chunk = Vec::new();
                    for r in rows {
                        let values: Value =
                            serde_json::from_str(&r.field_values).unwrap_or(Value::Null);
                        let mut cells = vec![
                            r.id.to_string(),
                            keel_platform::time::iso_millis(&r.created_at),
                            r.app_id,
                        ];
                        cells.extend(field_ids.iter().map(|id| match &values[id] {
                            Value::Null => String::new(),
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        }));
                        chunk.extend_from_slice(&csv_out::record(cells));
                    }
                    Some((Ok(axum::body::Bytes::from(chunk)), Some(last)))
                }
            }
        }
    });
    let stream = futures::stream::once(async move { Ok(header) }).chain(pages);
    let filename = format!("form-{}-submissions.csv", def.id.replace(':', "-"));
    Ok(download(&filename, stream))
}
