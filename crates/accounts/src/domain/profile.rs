//! Password and username changes.

use keel_platform::db::Db;
use keel_platform::guard::{Knock, Throttled};
use keel_platform::password::{self, HashError};
use keel_platform::sea_orm::DbErr;
use keel_platform::sea_orm::sea_query::Expr;

use super::fields::{Invalid, Password, Username};
use super::{sessions, users};
use crate::entity::user;
use crate::identity::cache::SessionCache;

/// Why a profile change was refused.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("oldPassword is not the current password")]
    WrongPassword,
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error("This username is already taken")]
    UsernameTaken,
    #[error(transparent)]
    Throttled(#[from] Throttled),
    #[error(transparent)]
    Hash(#[from] HashError),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// A password change as asked: the current password (checked through the
/// guard's `knock`) and the new one.
pub struct PasswordChange<'a> {
    pub old: String,
    pub new: Password,
    pub knock: Knock<'a>,
}

/// Changes the password and ends every other session.
pub async fn change_password(
    db: &Db,
    cache: &SessionCache,
    u: &user::Model,
    current_session: &str,
    PasswordChange {
        old,
        new,
        mut knock,
    }: PasswordChange<'_>,
) -> Result<(), ProfileError> {
    let new = new.into_inner();
    if !knock
        .verify(old.clone(), Some(u.password_hash.clone()))
        .await?
    {
        return Err(ProfileError::WrongPassword);
    }
    knock.accepted();
    if new == old {
        return Err(Invalid::new("newPassword", "must differ from oldPassword").into());
    }
    let hash = password::hash(new).await?;
    let txn = db.begin_write().await?;
    users::update(&u.id)
        .col_expr(user::Column::PasswordHash, Expr::value(hash))
        .exec(&txn)
        .await?;
    sessions::revoke_all(&txn, &u.id, Some(current_session)).await?;
    txn.commit().await?;
    cache.user_changed(&u.id).await;
    Ok(())
}

/// Renames the user; the slug follows.
pub async fn change_username(
    db: &Db,
    cache: &SessionCache,
    u: &user::Model,
    name: &Username,
) -> Result<(), ProfileError> {
    if users::username_taken(db.read(), &name.key(), Some(&u.id)).await? {
        return Err(ProfileError::UsernameTaken);
    }
    let res = users::update(&u.id)
        .col_expr(user::Column::Username, Expr::value(name.as_str()))
        .col_expr(user::Column::UsernameKey, Expr::value(name.key()))
        .col_expr(user::Column::Slug, Expr::value(name.key()))
        .exec(db.write())
        .await;
    match res {
        Ok(_) => {
            cache.user_changed(&u.id).await;
            Ok(())
        }
        Err(e) if keel_platform::db::is_unique_violation(&e) => Err(ProfileError::UsernameTaken),
        Err(e) => Err(e.into()),
    }
}
