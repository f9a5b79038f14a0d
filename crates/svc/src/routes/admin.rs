//! Admin routes of the host site: login, settings, forms, submissions, audit.

use axum::Json;
use axum::extract::{ConnectInfo, FromRequest, Path, Query, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use keel_platform::sea_orm::{EntityTrait, PaginatorTrait, QueryOrder, QuerySelect};
use keel_platform::time::millis;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::admin;
use crate::auth::{Admin, COOKIE_NAME, authenticate, cookie};
use crate::csv_export;
use crate::entity::audit;
use crate::error::{Error, ErrorBody};
use crate::forms::FormDef;
use crate::settings::{SettingsPatch, SettingsView};
use crate::site;
use crate::state::AppState;

/// JSON bodies, with errors in the namespace's shape.
#[derive(FromRequest)]
#[from_request(via(axum::Json), rejection(Error))]
pub struct Body<T>(pub T);

keel_platform::from_rejections!(Error: axum::extract::rejection::JsonRejection);

#[derive(Deserialize, ToSchema)]
pub struct LoginBody {
    username: String,
    password: String,
}

#[derive(Serialize, ToSchema)]
pub struct LoggedIn {
    /// Send it as `X-Svc-Nonce` with every state-changing request.
    nonce: String,
    user: UserView,
}

#[derive(Serialize, ToSchema)]
pub struct UserView {
    id: i64,
    username: String,
    capabilities: Vec<String>,
}

/// Cookie login: sets an HttpOnly, SameSite=Strict session cookie and
/// returns the nonce.
#[utoipa::path(post, path = "/admin/login", tag = "admin",
    request_body = LoginBody,
    responses(
        (status = 200, body = LoggedIn),
        (status = 401, description = "rest_invalid_credentials", body = ErrorBody),
    ))]
pub async fn login(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Body(body): Body<LoginBody>,
) -> Result<Response, Error> {
    let found = admin::find_user(&state.db, &body.username).await?;
    let hash = found
        .as_ref()
        .map_or_else(|| state.dummy_hash.clone(), |u| u.password_hash.clone());
    let ok = keel_platform::password::verify(body.password, hash).await;
    let Some(u) = found.filter(|_| ok) else {
        return Err(Error::api(
            StatusCode::UNAUTHORIZED,
            "rest_invalid_credentials",
            "Unknown username or wrong password",
        ));
    };
    let ttl = chrono::Duration::from_std(state.cfg.session_ttl)
        .map_err(|e| Error::Internal(e.to_string()))?;
    let (token, nonce) = admin::open_session(&state.db, &u, ttl).await?;
    let secure = is_https(&state, peer, &headers);
    let cookie = format!(
        "{COOKIE_NAME}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        ttl.num_seconds(),
        if secure { "; Secure" } else { "" }
    );
    let mut resp = Json(LoggedIn {
        nonce,
        user: view(&u),
    })
    .into_response();
    resp.headers_mut().insert(
        SET_COOKIE,
        HeaderValue::from_str(&cookie).map_err(|e| Error::Internal(e.to_string()))?,
    );
    Ok(resp)
}

/// Secure cookies when the request came over HTTPS (directly, or as a
/// trusted proxy says with `X-Forwarded-Proto`).
fn is_https(state: &AppState, peer: std::net::SocketAddr, headers: &HeaderMap) -> bool {
    state
        .platform
        .config
        .http
        .trusted_proxies
        .contains(&peer.ip())
        && headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

fn view(u: &crate::entity::user::Model) -> UserView {
    UserView {
        id: u.id,
        username: u.username.clone(),
        capabilities: u
            .capabilities
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
    }
}

#[derive(Serialize, ToSchema)]
pub struct Done {
    success: bool,
}

/// End the cookie session (needs the nonce).
#[utoipa::path(post, path = "/admin/logout", tag = "admin",
    responses(
        (status = 200, body = Done),
        (status = 401, body = ErrorBody),
        (status = 403, description = "rest_cookie_invalid_nonce", body = ErrorBody),
    ))]
pub async fn logout(
    State(state): State<AppState>,
    req: axum::extract::Request,
) -> Result<Response, Error> {
    let (parts, _) = req.into_parts();
    authenticate(&parts, &state).await?;
    if let Some(token) = cookie(&parts, COOKIE_NAME) {
        admin::close_session(&state.db, token).await?;
    }
    let mut resp = Json(Done { success: true }).into_response();
    resp.headers_mut().insert(
        SET_COOKIE,
        HeaderValue::from_static("svc_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    Ok(resp)
}

/// The site settings.
#[utoipa::path(get, path = "/admin/settings", tag = "admin",
    responses((status = 200, body = SettingsView), (status = 401, body = ErrorBody), (status = 403, description = "rest_forbidden", body = ErrorBody)))]
pub async fn get_settings(
    State(state): State<AppState>,
    _admin: Admin,
) -> Result<Json<SettingsView>, Error> {
    Ok(Json(state.settings.get().await?.as_ref().into()))
}

/// Change settings (only the given ones); effective at once.
#[utoipa::path(patch, path = "/admin/settings", tag = "admin",
    request_body = SettingsPatch,
    responses(
        (status = 200, body = SettingsView),
        (status = 400, description = "rest_invalid_param", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "rest_forbidden or rest_cookie_invalid_nonce", body = ErrorBody),
    ))]
pub async fn patch_settings(
    State(state): State<AppState>,
    _admin: Admin,
    Body(patch): Body<SettingsPatch>,
) -> Result<Json<SettingsView>, Error> {
    Ok(Json(state.settings.update(patch).await?.as_ref().into()))
}

#[derive(Serialize, ToSchema)]
pub struct FormList {
    forms: Vec<FormDef>,
}

/// Every form definition.
#[utoipa::path(get, path = "/admin/forms", tag = "admin",
    responses((status = 200, body = FormList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list_forms(
    State(state): State<AppState>,
    _admin: Admin,
) -> Result<Json<FormList>, Error> {
    Ok(Json(FormList {
        forms: site::list_forms(&state.db).await?,
    }))
}

/// Create a form.
#[utoipa::path(post, path = "/admin/forms", tag = "admin",
    request_body = FormDef,
    responses(
        (status = 201, body = FormDef),
        (status = 400, description = "rest_invalid_param", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 409, description = "form_exists", body = ErrorBody),
    ))]
pub async fn create_form(
    State(state): State<AppState>,
    _admin: Admin,
    Body(def): Body<FormDef>,
) -> Result<(StatusCode, Json<FormDef>), Error> {
    if site::get_form(&state.db, &def.id).await?.is_some() {
        return Err(Error::api(
            StatusCode::CONFLICT,
            "form_exists",
            "A form with this id exists; PUT replaces it",
        ));
    }
    site::put_form(&state.db, &def).await?;
    state.forms.forget();
    Ok((StatusCode::CREATED, Json(def)))
}

/// One form definition.
#[utoipa::path(get, path = "/admin/forms/{form_id}", tag = "admin",
    params(("form_id" = String, Path)),
    responses((status = 200, body = FormDef), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_form(
    State(state): State<AppState>,
    _admin: Admin,
    Path(form_id): Path<String>,
) -> Result<Json<FormDef>, Error> {
    site::get_form(&state.db, &form_id)
        .await?
        .map(Json)
        .ok_or_else(site::not_found)
}

/// Create or replace a form.
#[utoipa::path(put, path = "/admin/forms/{form_id}", tag = "admin",
    params(("form_id" = String, Path)),
    request_body = FormDef,
    responses(
        (status = 200, body = FormDef),
        (status = 400, description = "rest_invalid_param (also when the body's id differs)", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    ))]
pub async fn put_form(
    State(state): State<AppState>,
    _admin: Admin,
    Path(form_id): Path<String>,
    Body(def): Body<FormDef>,
) -> Result<Json<FormDef>, Error> {
    if def.id != form_id {
        return Err(Error::api(
            StatusCode::BAD_REQUEST,
            "rest_invalid_param",
            "The body's id differs from the path's",
        ));
    }
    site::put_form(&state.db, &def).await?;
    state.forms.forget();
    Ok(Json(def))
}

/// Delete a form and its submissions.
#[utoipa::path(delete, path = "/admin/forms/{form_id}", tag = "admin",
    params(("form_id" = String, Path)),
    responses((status = 200, body = Done), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_form(
    State(state): State<AppState>,
    _admin: Admin,
    Path(form_id): Path<String>,
) -> Result<Json<Done>, Error> {
    if !site::delete_form(&state.db, &form_id).await? {
        return Err(site::not_found());
    }
    state.forms.forget();
    Ok(Json(Done { success: true }))
}

#[derive(Deserialize, IntoParams)]
pub struct Paging {
    /// From 1 (default 1).
    page: Option<u64>,
    /// 1 to 100 (default 20).
    per_page: Option<u64>,
}

impl Paging {
    fn get(&self) -> Result<(u64, u64), Error> {
        let page = self.page.unwrap_or(1);
        let per_page = self.per_page.unwrap_or(20);
        if page == 0 || !(1..=100).contains(&per_page) {
            return Err(Error::api(
                StatusCode::BAD_REQUEST,
                "rest_invalid_param",
                "page must be at least 1 and per_page 1 to 100",
            ));
        }
        Ok((page, per_page))
    }
}

fn paging_query(
    q: Result<Query<Paging>, axum::extract::rejection::QueryRejection>,
) -> Result<Paging, Error> {
    q.map(|Query(p)| p)
        .map_err(|e| Error::api(StatusCode::BAD_REQUEST, "rest_invalid_param", e.body_text()))
}

#[derive(Serialize, ToSchema)]
pub struct SubmissionView {
    id: i64,
    form_id: String,
    #[schema(value_type = Object)]
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

fn paged<T: Serialize>(body: T, total: u64, per_page: u64) -> Response {
    let pages = total.div_ceil(per_page);
    let mut resp = Json(body).into_response();
    resp.headers_mut()
        .insert("x-wp-total", HeaderValue::from(total));
    resp.headers_mut()
        .insert("x-wp-totalpages", HeaderValue::from(pages));
    resp
}

/// A form's submissions, newest first (`X-WP-Total`, `X-WP-TotalPages`).
#[utoipa::path(get, path = "/admin/forms/{form_id}/submissions", tag = "admin",
    params(("form_id" = String, Path), Paging),
    responses((status = 200, body = SubmissionPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_submissions(
    State(state): State<AppState>,
    _admin: Admin,
    Path(form_id): Path<String>,
    q: Result<Query<Paging>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, Error> {
    let (page, per_page) = paging_query(q)?.get()?;
    site::get_form(&state.db, &form_id)
        .await?
        .ok_or_else(site::not_found)?;
    let (rows, total) = site::submissions(&state.db, &form_id, page, per_page).await?;
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
#[utoipa::path(get, path = "/admin/forms/{form_id}/submissions/export", tag = "admin",
    params(("form_id" = String, Path)),
    responses(
        (status = 200, description = "text/csv: id, created_at, app_id, then one column per field", content_type = "text/csv"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn export_submissions(
    State(state): State<AppState>,
    _admin: Admin,
    Path(form_id): Path<String>,
) -> Result<Response, Error> {
    let def = site::get_form(&state.db, &form_id)
        .await?
        .ok_or_else(site::not_found)?;
    let field_ids: Vec<String> = def.fields.iter().map(|f| f.id.clone()).collect();
    let header = {
        let mut h = vec![
            "id".to_owned(),
            "created_at".to_owned(),
            "app_id".to_owned(),
        ];
        h.extend(field_ids.iter().cloned());
        csv_export::record(h)
    };
    let db = state.db.clone();
    let pages = futures::stream::unfold(Some(0i64), move |after| {
        let (db, form_id, field_ids) = (db.clone(), form_id.clone(), field_ids.clone());
        async move {
            let after = after?;
            match site::submissions_after(&db, &form_id, after, 500).await {
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
                        chunk.extend_from_slice(&csv_export::record(cells));
                    }
                    Some((Ok(axum::body::Bytes::from(chunk)), Some(last)))
                }
            }
        }
    });
    let stream = futures::stream::once(async move { Ok(header) }).chain(pages);
    let filename = format!("form-{}-submissions.csv", def.id.replace(':', "-"));
    Ok(csv_export::download(&filename, stream))
}

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
#[utoipa::path(get, path = "/admin/audit", tag = "admin",
    params(Paging),
    responses((status = 200, body = AuditPage), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
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
