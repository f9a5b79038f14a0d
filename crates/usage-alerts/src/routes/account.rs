//! DELETE /account.

use axum::extract::State;
use keel_platform::http::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::domain::account;
use crate::error::Error;
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountDeleted {
    success: bool,
    devices_removed: u64,
    events_removed: u64,
}

/// Delete every piece of the caller's data, in one transaction.
#[utoipa::path(delete, path = "/account", tag = "usage-alerts", security(("identity" = [])),
    responses((status = 200, body = AccountDeleted)))]
pub async fn delete_account(
    State(state): State<AppState>,
    me: Caller,
) -> Result<Json<AccountDeleted>, Error> {
    let removed = account::delete_all(&state.db, &me.user_id).await?;
    Ok(Json(AccountDeleted {
        success: true,
        devices_removed: removed.devices,
        events_removed: removed.events,
    }))
}
