//! Password and username changes.

use keel_platform::sea_orm::sea_query::Expr;

use super::fields::{Password, Username};
use super::{sessions, users};
use crate::entity::user;
use crate::error::{self, Error};
use crate::state::AppState;
use keel_platform::password;

/// Changes the password and ends every other session.
pub async fn change_password(
    state: &AppState,
    u: &user::Model,
    current_session: &str,
    old: String,
    new: Password,
) -> Result<(), Error> {
    let new = new.into_inner();
    if !password::verify(old.clone(), u.password_hash.clone()).await {
        return Err(Error::bad_request(
            "INVALID_PASSWORD",
            "oldPassword is not the current password",
        ));
    }
    if new == old {
        return Err(error::validation(
            "newPassword",
            "must differ from oldPassword",
        ));
    }
    let hash = password::hash(new).await.map_err(Error::internal)?;
    let txn = state.db().begin_write().await?;
    users::update(&u.id)
        .col_expr(user::Column::PasswordHash, Expr::value(hash))
        .exec(&txn)
        .await?;
    sessions::revoke_all(&txn, &u.id, Some(current_session)).await?;
    txn.commit().await?;
    state.user_changed(&u.id).await;
    Ok(())
}

/// Renames the user; the slug follows.
pub async fn change_username(
    state: &AppState,
    u: &user::Model,
    name: &Username,
) -> Result<(), Error> {
    let db = state.db();
    if users::username_taken(db.read(), &name.key(), Some(&u.id)).await? {
        return Err(users::username_taken_error());
    }
    let res = users::update(&u.id)
        .col_expr(user::Column::Username, Expr::value(name.as_str()))
        .col_expr(user::Column::UsernameKey, Expr::value(name.key()))
        .col_expr(user::Column::Slug, Expr::value(name.key()))
        .exec(db.write())
        .await;
    match res {
        Ok(_) => {
            state.user_changed(&u.id).await;
            Ok(())
        }
        Err(e) if keel_platform::db::is_unique_violation(&e) => Err(users::username_taken_error()),
        Err(e) => Err(e.into()),
    }
}
