//! Host-site users: administrators (capability `svc_manage`), their
//! application passwords (24 characters, shown once, stored as SHA-256) and
//! cookie logins (a session cookie and a nonce).

use chrono::{DateTime, Utc};
use keel_platform::crypto::{constant_time_eq, random_token, sha256_hex};
use keel_platform::db::{Db, is_unique_violation};
use keel_platform::password::{self, HashError};
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, Set,
};
use rand::Rng;

use crate::entity::{app_password, session, user};

/// Why a user or an application password could not be added or found.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("username must be 1 to 60 of a-z A-Z 0-9 _ . - @")]
    BadUsername,
    #[error("The user {0:?} exists already")]
    UserExists(String),
    #[error("No user {0:?}")]
    NoUser(String),
    #[error("name must be 1 to 100 characters")]
    BadName,
    #[error("No capability {0:?} (svc_manage, svc_manage_admins)")]
    NoCapability(String),
    #[error("{username} already has an application password named {name:?}")]
    DuplicateName { username: String, name: String },
    #[error(transparent)]
    Hash(#[from] HashError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

pub const CAPABILITY: &str = "svc_manage";

pub fn has_capability(u: &user::Model, cap: &str) -> bool {
    u.capabilities.split_whitespace().any(|c| c == cap)
}

fn no_user(username: &str) -> AdminError {
    AdminError::NoUser(username.to_owned())
}

/// Creates a user; its login password is the one given or a new random one
/// (returned so it can be shown once).
pub async fn add_user(
    db: &Db,
    username: &str,
    password: Option<String>,
    capability: bool,
) -> Result<(user::Model, String), AdminError> {
    let ok = (1..=60).contains(&username.len())
        && username
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-@".contains(&b));
    if !ok {
        return Err(AdminError::BadUsername);
    }
    let password = password.unwrap_or_else(|| random_token(18));
    let hash = password::hash(password.clone()).await?;
    let caps = if capability { CAPABILITY } else { "" };
    let created = user::ActiveModel {
        username: Set(username.to_owned()),
        password_hash: Set(hash),
        capabilities: Set(caps.to_owned()),
        created_at: Set(Utc::now()),
        ..Default::default()
    }
    .insert(db.write())
    .await;
    match created {
        Ok(u) => Ok((u, password)),
        Err(e) if is_unique_violation(&e) => Err(AdminError::UserExists(username.to_owned())),
        Err(e) => Err(e.into()),
    }
}

pub async fn find_user(db: &Db, username: &str) -> Result<Option<user::Model>, DbErr> {
    user::Entity::find()
        .filter(user::Column::Username.eq(username))
        .one(db.read())
        .await
}

const APP_PASSWORD_ALPHABET: &[u8] =
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// 24 random characters shown in groups of four: `abcd efgh ijkl mnop qrst uvwx`.
fn new_app_password() -> (String, String) {
    let mut rng = rand::rng();
    let raw: String = (0..24)
        .map(|_| {
            char::from(APP_PASSWORD_ALPHABET[rng.random_range(0..APP_PASSWORD_ALPHABET.len())])
        })
        .collect();
    let shown = raw
        .as_bytes()
        .chunks(4)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    (raw, shown)
}

/// Spaces do not count, so the shown form works as typed.
pub fn normalize_app_password(given: &str) -> String {
    given.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A new application password: its row, and the value (shown once).
#[derive(Debug)]
pub struct NewAppPassword {
    pub row: app_password::Model,
    pub shown: String,
}

/// Adds an application password named `name` for `username`.
pub async fn add_app_password(db: &Db, username: &str, name: &str) -> Result<String, AdminError> {
    let u = find_user(db, username)
        .await?
        .ok_or_else(|| no_user(username))?;
    Ok(create_app_password(db, &u, name).await?.shown)
}

/// Adds an application password named `name` (trimmed, 1 to 100
/// characters, unique for the user) for `u`.
pub async fn create_app_password(
    db: &Db,
    u: &user::Model,
    name: &str,
) -> Result<NewAppPassword, AdminError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(AdminError::BadName);
    }
    let (raw, shown) = new_app_password();
    let row = app_password::ActiveModel {
        id: Set(uuid::Uuid::new_v4().to_string()),
        user_id: Set(u.id),
        name: Set(name.to_owned()),
        password_hash: Set(sha256_hex(raw.as_bytes())),
        created_at: Set(Utc::now()),
    };
    match row.insert(db.write()).await {
        Ok(row) => Ok(NewAppPassword { row, shown }),
        Err(e) if is_unique_violation(&e) => Err(AdminError::DuplicateName {
            username: u.username.clone(),
            name: name.to_owned(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// Removes the named application password; false if there was none.
pub async fn revoke_app_password(db: &Db, username: &str, name: &str) -> Result<bool, AdminError> {
    let u = find_user(db, username)
        .await?
        .ok_or_else(|| no_user(username))?;
    let res = app_password::Entity::delete_many()
        .filter(app_password::Column::UserId.eq(u.id))
        .filter(app_password::Column::Name.eq(name.trim()))
        .exec(db.write())
        .await?;
    Ok(res.rows_affected > 0)
}

/// Removes `u`'s application password `id`; false if `u` has none by that
/// id (another user's is not theirs to remove).
pub async fn revoke_app_password_by_id(db: &Db, u: &user::Model, id: &str) -> Result<bool, DbErr> {
    let res = app_password::Entity::delete_many()
        .filter(app_password::Column::UserId.eq(u.id))
        .filter(app_password::Column::Id.eq(id))
        .exec(db.write())
        .await?;
    Ok(res.rows_affected > 0)
}

pub async fn list_app_passwords(
    db: &Db,
    username: &str,
) -> Result<Vec<(String, DateTime<Utc>)>, AdminError> {
    let u = find_user(db, username)
        .await?
        .ok_or_else(|| no_user(username))?;
    Ok(app_passwords_of(db, &u)
        .await?
        .into_iter()
        .map(|p| (p.name, p.created_at))
        .collect())
}

/// `u`'s application passwords, oldest first.
pub async fn app_passwords_of(db: &Db, u: &user::Model) -> Result<Vec<app_password::Model>, DbErr> {
    app_password::Entity::find()
        .filter(app_password::Column::UserId.eq(u.id))
        .order_by_asc(app_password::Column::CreatedAt)
        .all(db.read())
        .await
}

/// The user whose application password this is, if it is one.
pub async fn check_app_password(
    db: &Db,
    username: &str,
    given: &str,
) -> Result<Option<user::Model>, DbErr> {
    let Some(u) = find_user(db, username)
        .await?
        .filter(|u| u.disabled_at.is_none())
    else {
        return Ok(None);
    };
    let hash = sha256_hex(normalize_app_password(given).as_bytes());
    let passwords = app_password::Entity::find()
        .filter(app_password::Column::UserId.eq(u.id))
        .all(db.read())
        .await?;
    let ok = passwords.iter().fold(false, |acc, p| {
        acc | constant_time_eq(p.password_hash.as_bytes(), hash.as_bytes())
    });
    Ok(ok.then_some(u))
}

/// A new cookie login: (cookie value, nonce).
pub async fn open_session(
    db: &Db,
    u: &user::Model,
    ttl: chrono::Duration,
) -> Result<(String, String), DbErr> {
    let token = random_token(32);
    let nonce = random_token(16);
    let now = Utc::now();
    session::ActiveModel {
        token_hash: Set(sha256_hex(token.as_bytes())),
        user_id: Set(u.id),
        nonce: Set(nonce.clone()),
        expires_at: Set(now + ttl),
        created_at: Set(now),
    }
    .insert(db.write())
    .await?;
    Ok((token, nonce))
}

/// The live session of a cookie, with its user.
pub async fn find_session(
    db: &Db,
    cookie: &str,
) -> Result<Option<(session::Model, user::Model)>, DbErr> {
    let Some(s) = session::Entity::find_by_id(sha256_hex(cookie.as_bytes()))
        .one(db.read())
        .await?
        .filter(|s| s.expires_at > Utc::now())
    else {
        return Ok(None);
    };
    let u = user::Entity::find_by_id(s.user_id).one(db.read()).await?;
    Ok(u.filter(|u| u.disabled_at.is_none()).map(|u| (s, u)))
}

pub async fn close_session(db: &Db, cookie: &str) -> Result<(), DbErr> {
    session::Entity::delete_by_id(sha256_hex(cookie.as_bytes()))
        .exec(db.write())
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_passwords_are_24_characters_in_groups_of_four() {
        let (raw, shown) = new_app_password();
        assert_eq!(raw.len(), 24);
        assert_eq!(shown.len(), 29);
        assert_eq!(shown.split(' ').count(), 6);
        assert_eq!(normalize_app_password(&shown), raw);
    }
}
