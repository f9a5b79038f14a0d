//! Looking users up and updating them (every update bumps `__v`).

use chrono::Utc;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter, UpdateMany,
};

use crate::entity::user::{self, Column, Entity};
use crate::id::UserId;

/// A user who is not there, or a name or address another user holds.
#[derive(Debug, thiserror::Error)]
pub enum UserError {
    #[error("User not found")]
    NotFound,
    #[error("This username is already taken")]
    UsernameTaken,
    #[error("This email address is already used by another account")]
    EmailTaken,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// By username or email, case-insensitively.
pub async fn find_by_login<C: ConnectionTrait>(
    conn: &C,
    login: &str,
) -> Result<Option<user::Model>, DbErr> {
    let key = login.trim().to_lowercase();
    Entity::find()
        .filter(
            Column::UsernameKey
                .eq(key.as_str())
                .or(Column::EmailKey.eq(key.as_str())),
        )
        .one(conn)
        .await
}

pub async fn find<C: ConnectionTrait>(conn: &C, id: &UserId) -> Result<user::Model, UserError> {
    Entity::find_by_id(id.as_str())
        .one(conn)
        .await?
        .ok_or(UserError::NotFound)
}

/// Whether another user than `except` holds the username key.
pub async fn username_taken<C: ConnectionTrait>(
    conn: &C,
    key: &str,
    except: Option<&str>,
) -> Result<bool, DbErr> {
    taken(conn, Column::UsernameKey, key, except).await
}

/// Whether another user than `except` holds the email key.
pub async fn email_taken<C: ConnectionTrait>(
    conn: &C,
    key: &str,
    except: Option<&str>,
) -> Result<bool, DbErr> {
    taken(conn, Column::EmailKey, key, except).await
}

async fn taken<C: ConnectionTrait>(
    conn: &C,
    col: Column,
    key: &str,
    except: Option<&str>,
) -> Result<bool, DbErr> {
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
