//! The one audit log: every service's administrative actions and every
//! operator's, newest first, filterable; every operator may read it.

use axum::Json;
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::IntoResponse;
use chrono::{DateTime, Utc};
use keel_platform::audit::Entry;
use keel_platform::audit::{self, Filter};
use keel_platform::console::input::Params;
use keel_platform::console::{Error, ErrorBody, Operator, invalid};
use keel_platform::csv_out;
use keel_platform::http::NoStore;
use keel_platform::values::{NotBlank, Text};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::{IntoParams, ToSchema};

use crate::state::AppState;

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this actor's entries (`operator:ada`, `cli`).
    #[param(inline)]
    pub actor: Option<Text<200, NotBlank>>,
    /// Only this action (`accounts_user_banned`).
    #[param(inline)]
    pub action: Option<Text<100, NotBlank>>,
    /// Only entries on this subject (a user id, an operator's name).
    #[param(inline)]
    pub subject: Option<Text<200, NotBlank>>,
    /// The page, from 1.
    #[param(minimum = 1, maximum = 100000)]
    pub page: Option<u64>,
}

impl AuditQuery {
    fn filter(self) -> Filter {
        filter(self.actor, self.action, self.subject)
    }
}

/// The export's filters: the list's, without a page.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    #[param(inline)]
    pub actor: Option<Text<200, NotBlank>>,
    #[param(inline)]
    pub action: Option<Text<100, NotBlank>>,
    #[param(inline)]
    pub subject: Option<Text<200, NotBlank>>,
}

fn filter(
    actor: Option<Text<200, NotBlank>>,
    action: Option<Text<100, NotBlank>>,
    subject: Option<Text<200, NotBlank>>,
) -> Filter {
    Filter {
        service: None,
        actor: actor.map(Text::into_string),
        action: action.map(Text::into_string),
        subject: subject.map(Text::into_string),
    }
}

#[derive(Serialize, ToSchema)]
pub struct AuditEntry {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub service: String,
    pub actor: String,
    pub action: String,
    pub subject: Option<String>,
    /// The state before and after, and anything else kept (JSON).
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
    pub detail: Option<serde_json::Value>,
    pub address: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    pub total: u64,
    pub page: u64,
    pub per_page: u64,
}

const PER_PAGE: u64 = 50;

/// At most this many entries an export holds (the newest).
const EXPORT_MAX: u64 = 100_000;

/// Audit entries, newest first, 50 a page.
#[utoipa::path(get, path = "/console/v1/audit", tag = "audit",
    security(("console_session" = [])),
    params(AuditQuery),
    responses(
        (status = 200, body = AuditPage),
        (status = 400, description = "invalid_input: a parameter is unknown, of the wrong type or too long", body = ErrorBody),
        (status = 401, description = "not_signed_in", body = ErrorBody),
    ))]
pub async fn list(
    State(state): State<AppState>,
    _op: Operator,
    Params(q): Params<AuditQuery>,
) -> Result<NoStore<Json<AuditPage>>, Error> {
    let page = q.page.unwrap_or(1);
    if !(1..=100_000).contains(&page) {
        return Err(invalid("page is a whole number from 1 to 100000."));
    }
    let filter = q.filter();
    let (rows, total) = audit::page(&state.platform.db, &filter, page, PER_PAGE).await?;
    let json = |t: Option<String>| t.and_then(|t| serde_json::from_str(&t).ok());
    let entries = rows
        .into_iter()
        .map(|r| AuditEntry {
            id: r.id,
            at: r.at,
            service: r.service,
            actor: r.actor,
            action: r.action,
            subject: r.subject,
            before: json(r.before),
            after: json(r.after),
            detail: json(r.detail),
            address: r.address,
        })
        .collect();
    Ok(NoStore(Json(AuditPage {
        entries,
        total,
        page,
        per_page: PER_PAGE,
    })))
}

/// The entries the filters select (newest first, at most 100,000) as CSV:
/// `id,at,service,actor,action,subject,before,after,detail,address`, each
/// cell a spreadsheet will not run as a formula.
#[utoipa::path(get, path = "/console/v1/audit/export", tag = "audit",
    security(("console_session" = [])),
    params(ExportQuery),
    responses(
        (status = 200, description = "The entries as CSV (`audit.csv`)", content_type = "text/csv"),
        (status = 400, description = "invalid_input: a parameter is unknown, of the wrong type or too long", body = ErrorBody),
        (status = 401, description = "not_signed_in", body = ErrorBody),
    ))]
pub async fn export(
    State(state): State<AppState>,
    op: Operator,
    Params(q): Params<ExportQuery>,
) -> Result<impl IntoResponse, Error> {
    let filter = filter(q.actor, q.action, q.subject);
    let db = &state.platform.db;
    let (rows, _) = audit::page(db, &filter, 1, EXPORT_MAX).await?;
    let mut out = csv_out::record([
        "id", "at", "service", "actor", "action", "subject", "before", "after", "detail", "address",
    ])
    .to_vec();
    for r in &rows {
        let opt = |v: &Option<String>| v.clone().unwrap_or_default();
        out.extend_from_slice(&csv_out::record([
            r.id.to_string(),
            r.at.to_rfc3339(),
            r.service.clone(),
            r.actor.clone(),
            r.action.clone(),
            opt(&r.subject),
            opt(&r.before),
            opt(&r.after),
            opt(&r.detail),
            opt(&r.address),
        ]));
    }
    let entry = Entry::new(crate::NAME, "audit_exported").detail(json!({ "entries": rows.len() }));
    op.record(db, entry).await;
    let headers = [
        (CONTENT_TYPE, "text/csv; charset=utf-8"),
        (CONTENT_DISPOSITION, "attachment; filename=\"audit.csv\""),
    ];
    Ok(NoStore((headers, out)))
}
