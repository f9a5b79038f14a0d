//! What an operator does to users (from the console): find them by a
//! prefix of the username, the email or the id; ban (until a time, or
//! until lifted) and unban; end sessions. Each change reaches every node
//! at once (the user's session-cache epoch is bumped).

use chrono::{DateTime, Utc};
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use crate::domain::sessions;
use crate::entity::user::{self, Column, Entity};
use crate::identity::cache::SessionCache;

/// At most this many users a search answers.
pub const SEARCH_LIMIT: u64 = 50;

/// The condition "`col` starts with `prefix`" as a range (`>= prefix` and
/// `< prefix` with its last character raised), which both databases
/// answer from the column's index.
fn starts_with(col: Column, prefix: &str) -> Condition {
    let mut upper: Vec<char> = prefix.chars().collect();
    let Some(last) = upper.pop() else {
        return Condition::all();
    };
    let raised = char::from_u32(u32::from(last) + 1).unwrap_or(char::MAX);
    upper.push(raised);
    let upper: String = upper.into_iter().collect();
    Condition::all()
        .add(col.gte(prefix))
        .add(col.lt(upper.as_str()))
}

/// Users whose username, email or id starts with `query` (without case
/// for the first two), by username; at most [`SEARCH_LIMIT`].
pub async fn search<C: ConnectionTrait>(conn: &C, query: &str) -> Result<Vec<user::Model>, DbErr> {
    // Usernames, emails and ids are kept lower-case.
    let key = query.trim().to_lowercase();
    let mut found: Vec<user::Model> = Vec::new();
    for (col, prefix) in [
        (Column::UsernameKey, key.as_str()),
        (Column::EmailKey, key.as_str()),
        (Column::Id, key.as_str()),
    ] {
        let rows = Entity::find()
            .filter(starts_with(col, prefix))
            .order_by_asc(col)
            .limit(SEARCH_LIMIT)
            .all(conn)
            .await?;
        for u in rows {
            if !found.iter().any(|f| f.id == u.id) {
                found.push(u);
            }
        }
    }
    // The range reads the index; the prefix itself is checked here (a
    // collation may order other text inside the range).
    found.retain(|u| {
        u.username_key.starts_with(&key) || u.email_key.starts_with(&key) || u.id.starts_with(&key)
    });
    found.sort_by(|a, b| a.username_key.cmp(&b.username_key));
    found.truncate(usize::try_from(SEARCH_LIMIT).unwrap_or(50));
    Ok(found)
}

/// Bans the user (until `until`, or until lifted); their sessions stay,
/// refused while the ban lasts. The state before.
pub async fn ban<C: ConnectionTrait>(
    conn: &C,
    cache: &SessionCache,
    u: &user::Model,
    until: Option<DateTime<Utc>>,
) -> Result<(), DbErr> {
    crate::domain::users::update(&u.id)
        .col_expr(Column::IsBanned, Expr::value(true))
        .col_expr(Column::BannedUntil, Expr::value(until))
        .exec(conn)
        .await?;
    cache.user_changed(&u.id).await;
    Ok(())
}

/// Lifts the user's ban.
pub async fn unban<C: ConnectionTrait>(
    conn: &C,
    cache: &SessionCache,
    u: &user::Model,
) -> Result<(), DbErr> {
    crate::domain::users::update(&u.id)
        .col_expr(Column::IsBanned, Expr::value(false))
        .col_expr(
            Column::BannedUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .exec(conn)
        .await?;
    cache.user_changed(&u.id).await;
    Ok(())
}

/// Ends every live session of the user; how many.
pub async fn end_sessions<C: ConnectionTrait>(
    conn: &C,
    cache: &SessionCache,
    u: &user::Model,
) -> Result<u64, DbErr> {
    let n = sessions::revoke_all(conn, &u.id, None).await?;
    cache.user_changed(&u.id).await;
    Ok(n)
}

/// How many weekly and yearly goals the user has.
pub async fn goal_counts<C: ConnectionTrait>(conn: &C, user_id: &str) -> Result<(u64, u64), DbErr> {
    use crate::entity::{weekly_goal, yearly_goal};
    use keel_platform::sea_orm::PaginatorTrait;
    let weekly = weekly_goal::Entity::find()
        .filter(weekly_goal::Column::UserId.eq(user_id))
        .count(conn)
        .await?;
    let yearly = yearly_goal::Entity::find()
        .filter(yearly_goal::Column::UserId.eq(user_id))
        .count(conn)
        .await?;
    Ok((weekly, yearly))
}

/// The user's refused sign-ins (wrong password or code, or while banned),
/// newest first, at most 20: (when, what failed, from where).
pub async fn refused_sign_ins(
    db: &keel_platform::db::Db,
    user_id: &str,
) -> Result<Vec<(DateTime<Utc>, String, Option<String>)>, DbErr> {
    let filter = keel_platform::audit::Filter {
        service: Some(crate::NAME),
        action: Some("accounts_sign_in_refused".to_owned()),
        subject: Some(user_id.to_owned()),
        actor: None,
    };
    let (rows, _) = keel_platform::audit::page(db, &filter, 1, 20).await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let failed = r
                .detail
                .and_then(|d| serde_json::from_str::<serde_json::Value>(&d).ok())
                .and_then(|d| d["failed"].as_str().map(str::to_owned))
                .unwrap_or_default();
            (r.at, failed, r.address)
        })
        .collect())
}

/// The ban as the audit log records it.
pub fn ban_state(u: &user::Model) -> serde_json::Value {
    serde_json::json!({ "banned": u.banned_now(), "until": u.banned_until })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_range_ends_below_the_next_prefix() {
        let c = format!("{:?}", starts_with(Column::EmailKey, "ab"));
        assert!(c.contains("\"ab\"") && c.contains("\"ac\""), "{c}");
    }
}
