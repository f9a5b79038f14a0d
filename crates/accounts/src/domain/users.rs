//! Looking users up and updating them (every update bumps `__v`).

use chrono::Utc;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, ExprTrait, QueryFilter, UpdateMany,
};

use crate::entity::user::{self, Column, Entity};
use crate::error::{self, Error};

/// By username or email, case-insensitively.
pub async fn find_by_login<C: ConnectionTrait>(
    conn: &C,
    login: &str,
) -> Result<Option<user::Model>, Error> {
    let key = login.trim().to_lowercase();
    Ok(Entity::find()
        .filter(
            Column::UsernameKey
                .eq(key.as_str())
                .or(Column::EmailKey.eq(key.as_str())),
        )
        .one(conn)
        .await?)
}

pub async fn find<C: ConnectionTrait>(conn: &C, id: &str) -> Result<user::Model, Error> {
    Entity::find_by_id(id)
        .one(conn)
        .await?
        .ok_or_else(|| error::not_found("User"))
}

/// Whether another user than `except` holds the username key.
pub async fn username_taken<C: ConnectionTrait>(
    conn: &C,
    key: &str,
    except: Option<&str>,
) -> Result<bool, Error> {
    taken(conn, Column::UsernameKey, key, except).await
}

/// Whether another user than `except` holds the email key.
pub async fn email_taken<C: ConnectionTrait>(
    conn: &C,
    key: &str,
    except: Option<&str>,
) -> Result<bool, Error> {
    taken(conn, Column::EmailKey, key, except).await
}

async fn taken<C: ConnectionTrait>(
    conn: &C,
    col: Column,
    key: &str,
    except: Option<&str>,
) -> Result<bool, Error> {
    let mut q = Entity::find().filter(col.eq(key));
    if let Some(id) = except {
        q = q.filter(Column::Id.ne(id));
    }
    Ok(q.one(conn).await?.is_some())
}

/// An update of one user that bumps the revision and `updatedAt`.
pub fn update(id: &str) -> UpdateMany<Entity> {
    Entity::update_many()
        .col_expr(Column::Revision, Expr::col(Column::Revision).add(1))
        .col_expr(Column::UpdatedAt, Expr::value(Utc::now()))
        .filter(Column::Id.eq(id))
}

pub fn username_taken_error() -> Error {
    Error::conflict("USERNAME_TAKEN", "This username is already taken")
}

pub fn email_taken_error() -> Error {
    Error::conflict(
        "EMAIL_TAKEN",
        "This email address is already used by another account",
    )
}
