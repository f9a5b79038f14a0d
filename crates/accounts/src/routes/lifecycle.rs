//! The account's life beyond the profile: deleting it, a copy of its data,
//! its notification preferences, and the unsubscribe link of the weekly
//! goals mail (no session: the link is the credential).

use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{Html, IntoResponse, Response};
use chrono::{DateTime, Utc};
use keel_platform::http::{Json, NoStore, PageHeaders, Referrer};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::proof::ProofBody;
use crate::auth::Authed;
use crate::domain::deletion;
use crate::domain::fields;
use crate::domain::sessions::Client;
use crate::domain::{export, notifications};
use crate::error::code::*;
use crate::error::{self, Error, ErrorBody};
use crate::input::Input;
use crate::routes::failures::*;
use crate::state::AppState;
use crate::views::{self, CodeMessage};

/// Delete the account and everything stored with it, at once and for good.
/// Every token of the user stops working on every node; a mail tells the
/// address.
#[utoipa::path(delete, path = "/account", tag = "account", security(("bearer" = [])),
    request_body(content((ProofBody = "application/x-www-form-urlencoded"), (ProofBody = "application/json"))),
    responses(
        (status = 200, description = "ACCOUNT_DELETED", body = CodeMessage),
        ProofRefused,
    ))]
pub async fn delete_account(
    State(state): State<AppState>,
    me: Authed,
    client: Client,
    Input(body): Input<ProofBody>,
) -> Result<Json<CodeMessage>, Error> {
    let proof = body.into_proof(&state, &client, &me.user).await?;
    deletion::delete_account(state.keys(), &state.cfg.app_name, &me.user, proof).await?;
    Ok(CodeMessage::new(
        "ACCOUNT_DELETED",
        "The account was deleted",
    ))
}

/// Exports a user may ask for an hour.
const EXPORTS_PER_HOUR: u64 = 10;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountExport {
    /// When this copy was made.
    #[serde(with = "keel_platform::time::millis")]
    #[schema(value_type = String, format = DateTime)]
    exported_at: DateTime<Utc>,
    /// The profile as `GET /account` shows it: names, address, role,
    /// whether two-factor is on (never its secret or codes), notification
    /// preferences, timestamps.
    user: views::User,
    /// Live sessions with their devices and locations, newest first.
    sessions: Vec<views::Session>,
    /// Weekly goals, newest first (`yearlyGoal`: the yearly goal holding it).
    weekly_goals: Vec<views::WeeklyGoal>,
    /// Yearly goals, newest first, each with the weekly goals it holds.
    yearly_goals: Vec<views::YearlyGoal>,
    /// A change of address waiting for its confirmation, or `null`.
    pending_email_change: Option<PendingEmailChange>,
    /// Passkeys, oldest first: name, when added, when last used (never
    /// the public key or the authenticator's counter).
    passkeys: Vec<views::PasskeyView>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingEmailChange {
    email: String,
    #[serde(with = "keel_platform::time::millis")]
    #[schema(value_type = String, format = DateTime)]
    expires_at: DateTime<Utc>,
}

/// A copy of everything stored about the user that they may see, as a
/// JSON attachment (`account-<username>.json`). At most ten an hour.
#[utoipa::path(get, path = "/account/export", tag = "account", security(("bearer" = [])),
    responses(
        (status = 200, body = AccountExport, headers(("Content-Disposition" = String, description = "attachment; filename=\"account-<username>.json\""))),
        (status = 429, description = format!("{TOO_MANY_REQUESTS}: more than ten exports in an hour"), body = ErrorBody),
    ))]
pub async fn export_account(
    State(state): State<AppState>,
    me: Authed,
) -> Result<impl IntoResponse, Error> {
    let hit = state
        .platform
        .cache
        .hit(
            "accounts:export",
            &me.user.id,
            EXPORTS_PER_HOUR,
            Duration::from_secs(3600),
        )
        .await;
    if !hit.allowed {
        return Err(error::too_many_exports(hit.retry_after.as_secs().max(1)));
    }
    let data = export::gather(state.db(), &me.user).await?;
    let body = export_of(&me.user, data);
    let disposition = format!("attachment; filename=\"account-{}.json\"", me.user.username);
    Ok(NoStore(([(CONTENT_DISPOSITION, disposition)], Json(body))))
}

/// The user's export, as they and an operator get it.
pub(crate) fn export_of(u: &crate::entity::user::Model, data: export::Export) -> AccountExport {
    AccountExport {
        exported_at: Utc::now(),
        user: u.into(),
        sessions: data.sessions.iter().map(Into::into).collect(),
        weekly_goals: data.weekly.iter().map(Into::into).collect(),
        yearly_goals: data.yearly.iter().map(Into::into).collect(),
        passkeys: data.passkeys.iter().map(Into::into).collect(),
        pending_email_change: data.email_change.map(|c| PendingEmailChange {
            email: c.new_email,
            expires_at: c.expires_at,
        }),
    }
}

#[derive(Serialize, ToSchema)]
pub struct NotificationsResponse {
    notifications: views::Notifications,
}

/// The notification preferences (as `user.notifications` shows them).
#[utoipa::path(get, path = "/account/notifications", tag = "account", security(("bearer" = [])),
    responses((status = 200, body = NotificationsResponse)))]
pub async fn get_notifications(me: Authed) -> Json<NotificationsResponse> {
    Json(NotificationsResponse {
        notifications: views::Notifications::of(&me.user),
    })
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotificationsBody {
    /// The weekly goals mail: on or off.
    #[schema(value_type = bool, required = true)]
    #[serde(default, deserialize_with = "crate::input::lenient_bool")]
    weekly_goals: Option<bool>,
}

/// Change the notification preferences; a change counts in `__v`.
#[utoipa::path(put, path = "/account/notifications", tag = "account", security(("bearer" = [])),
    request_body(content((NotificationsBody = "application/x-www-form-urlencoded"), (NotificationsBody = "application/json"))),
    responses(
        (status = 200, body = NotificationsResponse),
        Invalid,
    ))]
pub async fn put_notifications(
    State(state): State<AppState>,
    me: Authed,
    Input(body): Input<NotificationsBody>,
) -> Result<Json<NotificationsResponse>, Error> {
    let on = body
        .weekly_goals
        .ok_or_else(|| fields::Invalid::required("weeklyGoals"))?;
    notifications::set_weekly_goals(state.db(), &state.sessions, &me.user.id, on).await?;
    Ok(Json(NotificationsResponse {
        notifications: views::Notifications {
            email: views::EmailNotifications { weekly_goals: on },
        },
    }))
}

/// One-click unsubscribe (RFC 8058): the mail's `List-Unsubscribe` URL,
/// posted by the mailbox provider or the person, with no session. Turns the
/// weekly goals mail off.
#[utoipa::path(post, path = "/notifications/unsubscribe/{token}", tag = "account",
    params(("token" = String, Path, description = "The token from the mail's link", min_length = 1)),
    responses(
        (status = 200, description = "UNSUBSCRIBED", body = CodeMessage),
        (status = 400, description = format!("{INVALID_TOKEN}: not a token of this service"), body = ErrorBody),
    ))]
pub async fn unsubscribe(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Result<Json<CodeMessage>, Error> {
    notifications::unsubscribe(state.db(), &state.sessions, &state.secrets, &token).await?;
    Ok(CodeMessage::new(
        "UNSUBSCRIBED",
        "You will get no more weekly goals mails",
    ))
}

/// The unsubscribe link opened in a browser: a page with a button that
/// posts it. A GET changes nothing, so a link scanner cannot unsubscribe.
#[utoipa::path(get, path = "/notifications/unsubscribe/{token}", tag = "account",
    params(("token" = String, Path, description = "The token from the mail's link", min_length = 1)),
    responses(
        (status = 200, description = "A page with the unsubscribe button", body = String, content_type = "text/html; charset=utf-8"),
    ))]
pub async fn unsubscribe_page(State(state): State<AppState>) -> Response {
    let name = keel_platform::http::escape_html(&state.cfg.app_name);
    let page = (
        [(CONTENT_TYPE, "text/html; charset=utf-8")],
        Html(format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Unsubscribe</title></head>\
<body><main><h1>Weekly goals mail</h1><p>Stop the weekly goals mail from {name}?</p>\
<form method=\"post\"><button type=\"submit\">Unsubscribe</button></form></main></body></html>"
        )),
    )
        .into_response();
    // The page's address holds the token: it is sent nowhere else.
    PageHeaders::fixed(UNSUBSCRIBE_POLICY, Referrer::None).apply(page)
}

/// The unsubscribe page loads nothing, and posts to itself only.
const UNSUBSCRIBE_POLICY: &str =
    "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
