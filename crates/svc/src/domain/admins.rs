//! The lifecycle of host-site users after `add`: removing, disabling and
//! enabling one, setting a new login password, ending every way in (cookie
//! sessions and application passwords), and capabilities. Each returns
//! what an audit entry records (never a password).

use chrono::Utc;
use keel_platform::crypto::random_token;
use keel_platform::db::Db;
use keel_platform::password;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
};
use serde::Serialize;

use super::admin::{AdminError, find_user};
use crate::entity::{app_password, session, user};

/// Lets a user manage the other users (this list, disable, remove, ...).
pub const MANAGE_ADMINS: &str = "svc_manage_admins";

/// The capabilities a user may hold.
pub const CAPABILITIES: &[&str] = &[super::admin::CAPABILITY, MANAGE_ADMINS];

/// A user as the admins list shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct AdminSummary {
    pub id: i64,
    pub username: String,
    pub capabilities: Vec<String>,
    pub disabled: bool,
    /// Cookie sessions not yet expired.
    pub sessions: u64,
    pub app_passwords: u64,
    #[serde(with = "keel_platform::time::millis")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: chrono::DateTime<Utc>,
}

/// What ending a user's ways in ended. (`WaysInEnded` in the documents:
/// the console's holds accounts' `Ended` too.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[schema(as = WaysInEnded)]
pub struct Ended {
    pub sessions: u64,
    pub app_passwords: u64,
}

async fn named(db: &Db, username: &str) -> Result<user::Model, AdminError> {
    find_user(db, username)
        .await?
        .ok_or_else(|| AdminError::NoUser(username.to_owned()))
}

/// Every user, oldest first, with how many ways in each has.
pub async fn list(db: &Db) -> Result<Vec<AdminSummary>, AdminError> {
    let users = user::Entity::find()
        .order_by_asc(user::Column::Id)
        .all(db.read())
        .await?;
    let mut all = Vec::with_capacity(users.len());
    for u in users {
        let sessions = session::Entity::find()
            .filter(session::Column::UserId.eq(u.id))
            .filter(session::Column::ExpiresAt.gt(Utc::now()))
            .count(db.read())
            .await?;
        let app_passwords = app_password::Entity::find()
            .filter(app_password::Column::UserId.eq(u.id))
            .count(db.read())
            .await?;
        all.push(AdminSummary {
            id: u.id,
            capabilities: u
                .capabilities
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
            disabled: u.disabled_at.is_some(),
            username: u.username,
            sessions,
            app_passwords,
            created_at: u.created_at,
        });
    }
    Ok(all)
}

/// Removes `username` with its sessions, application passwords and
/// idempotency keys.
pub async fn remove(db: &Db, username: &str) -> Result<user::Model, AdminError> {
    let u = named(db, username).await?;
    user::Entity::delete_by_id(u.id).exec(db.write()).await?;
    Ok(u)
}

/// Ends every cookie session and revokes every application password of `u`.
async fn end_all<C: ConnectionTrait>(conn: &C, u: &user::Model) -> Result<Ended, AdminError> {
    let sessions = session::Entity::delete_many()
        .filter(session::Column::UserId.eq(u.id))
        .exec(conn)
        .await?
        .rows_affected;
    let app_passwords = app_password::Entity::delete_many()
        .filter(app_password::Column::UserId.eq(u.id))
        .exec(conn)
        .await?
        .rows_affected;
    Ok(Ended {
        sessions,
        app_passwords,
    })
}

/// Ends every way in of `username`: the cookie sessions and the
/// application passwords.
pub async fn end_sessions(db: &Db, username: &str) -> Result<Ended, AdminError> {
    let u = named(db, username).await?;
    end_all(db.write(), &u).await
}

/// Disables (`true`) or enables `username`; disabling ends every way in.
/// Whether it was disabled before, and what ended.
pub async fn set_disabled(
    db: &Db,
    username: &str,
    disabled: bool,
) -> Result<(bool, Ended), AdminError> {
    let u = named(db, username).await?;
    let was = u.disabled_at.is_some();
    let txn = db.begin_write().await?;
    user::Entity::update_many()
        .col_expr(
            user::Column::DisabledAt,
            Expr::value(disabled.then(Utc::now)),
        )
        .filter(user::Column::Id.eq(u.id))
        .exec(&txn)
        .await?;
    let ended = if disabled {
        end_all(&txn, &u).await?
    } else {
        Ended {
            sessions: 0,
            app_passwords: 0,
        }
    };
    txn.commit().await?;
    Ok((was, ended))
}

/// A new login password for `username` (the one given, or a new random
/// one, returned to be shown once); the cookie sessions end.
pub async fn set_password(
    db: &Db,
    username: &str,
    given: Option<String>,
) -> Result<(String, u64), AdminError> {
    let u = named(db, username).await?;
    let new = given.unwrap_or_else(|| random_token(18));
    let hash = password::hash(new.clone()).await?;
    let txn = db.begin_write().await?;
    user::Entity::update_many()
        .col_expr(user::Column::PasswordHash, Expr::value(hash))
        .filter(user::Column::Id.eq(u.id))
        .exec(&txn)
        .await?;
    let sessions = session::Entity::delete_many()
        .filter(session::Column::UserId.eq(u.id))
        .exec(&txn)
        .await?
        .rows_affected;
    txn.commit().await?;
    Ok((new, sessions))
}

/// Grants (`true`) or revokes `capability` of `username`; the capabilities
/// before and after.
pub async fn set_capability(
    db: &Db,
    username: &str,
    capability: &str,
    grant: bool,
) -> Result<(Vec<String>, Vec<String>), AdminError> {
    if !CAPABILITIES.contains(&capability) {
        return Err(AdminError::NoCapability(capability.to_owned()));
    }
    let u = named(db, username).await?;
    let before: Vec<String> = u
        .capabilities
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let mut after: Vec<String> = before
        .iter()
        .filter(|c| *c != capability)
        .cloned()
        .collect();
    if grant {
        after.push(capability.to_owned());
    }
    user::Entity::update_many()
        .col_expr(user::Column::Capabilities, Expr::value(after.join(" ")))
        .filter(user::Column::Id.eq(u.id))
        .exec(db.write())
        .await?;
    Ok((before, after))
}
