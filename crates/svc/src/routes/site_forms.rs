//! /admin/forms: the form definitions.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use keel_platform::audit::Entry;
use keel_platform::http::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::Done;
use crate::auth::Admin;
use crate::domain::forms::FormDef;
use crate::domain::ids::FormId;
use crate::domain::site;
use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::input::Body;
use crate::routes::failures::*;
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct FormList {
    forms: Vec<FormDef>,
}

/// Every form definition.
#[utoipa::path(get, path = "/admin/forms", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    responses((status = 200, body = FormList), NotAdmin))]
pub async fn list_forms(
    State(state): State<AppState>,
    _admin: Admin,
) -> Result<Json<FormList>, Error> {
    Ok(Json(FormList {
        forms: site::list_forms(&state.db).await?,
    }))
}

/// Create a form.
#[utoipa::path(post, path = "/admin/forms", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    request_body = FormDef,
    responses(
        (status = 201, body = FormDef),
        (status = 400, description = REST_INVALID_PARAM, body = ErrorBody),
        NotAdmin,
        (status = 409, description = FORM_EXISTS, body = ErrorBody),
    ))]
pub async fn create_form(
    State(state): State<AppState>,
    admin: Admin,
    Body(def): Body<FormDef>,
) -> Result<(StatusCode, Json<FormDef>), Error> {
    if site::get_form(&state.db, &def.id).await?.is_some() {
        return Err(error::form_exists());
    }
    site::put_form(&state.db, &def).await?;
    state.forms.forget();
    let entry = Entry::new(crate::NAME, "svc_form_created").on(&def.id);
    admin.record(&state, entry.change(None, json(&def))).await;
    Ok((StatusCode::CREATED, Json(def)))
}

/// One form definition.
#[utoipa::path(get, path = "/admin/forms/{form_id}", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("form_id" = String, Path)),
    responses((status = 200, body = FormDef), NotAdmin, NoSuchForm))]
pub async fn get_form(
    State(state): State<AppState>,
    _admin: Admin,
    Path(form_id): Path<String>,
) -> Result<Json<FormDef>, Error> {
    let form_id = FormId::parse(&form_id).ok_or_else(error::no_such_form)?;
    site::get_form(&state.db, form_id.as_str())
        .await?
        .map(Json)
        .ok_or_else(error::no_such_form)
}

/// Create or replace a form.
#[utoipa::path(put, path = "/admin/forms/{form_id}", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("form_id" = String, Path)),
    request_body = FormDef,
    responses(
        (status = 200, body = FormDef),
        (status = 400, description = format!("{REST_INVALID_PARAM} (also when the body's id differs)"), body = ErrorBody),
        NotAdmin,
    ))]
pub async fn put_form(
    State(state): State<AppState>,
    admin: Admin,
    Path(form_id): Path<String>,
    Body(def): Body<FormDef>,
) -> Result<Json<FormDef>, Error> {
    let form_id = FormId::parse(&form_id)
        .filter(|id| def.id == id.as_str())
        .ok_or_else(error::id_mismatch)?;
    let before = site::get_form(&state.db, form_id.as_str()).await?;
    site::put_form(&state.db, &def).await?;
    state.forms.forget();
    let action = if before.is_some() {
        "svc_form_changed"
    } else {
        "svc_form_created"
    };
    let entry = Entry::new(crate::NAME, action).on(&def.id);
    let before = before.as_ref().and_then(json);
    admin.record(&state, entry.change(before, json(&def))).await;
    Ok(Json(def))
}

/// Delete a form and its submissions.
#[utoipa::path(delete, path = "/admin/forms/{form_id}", tag = "admin", security(("app_password" = []), ("session_cookie" = [], "nonce" = [])),
    params(("form_id" = String, Path)),
    responses((status = 200, body = Done), NotAdmin, NoSuchForm))]
pub async fn delete_form(
    State(state): State<AppState>,
    admin: Admin,
    Path(form_id): Path<String>,
) -> Result<Json<Done>, Error> {
    let form_id = FormId::parse(&form_id).ok_or_else(error::no_such_form)?;
    let before = site::get_form(&state.db, form_id.as_str()).await?;
    if !site::delete_form(&state.db, form_id.as_str()).await? {
        return Err(error::no_such_form());
    }
    state.forms.forget();
    let entry = Entry::new(crate::NAME, "svc_form_removed").on(form_id.as_str());
    admin
        .record(&state, entry.change(before.as_ref().and_then(json), None))
        .await;
    Ok(Json(Done::OK))
}

/// A form definition as the audit log keeps it.
fn json(def: &FormDef) -> Option<serde_json::Value> {
    serde_json::to_value(def).ok()
}
