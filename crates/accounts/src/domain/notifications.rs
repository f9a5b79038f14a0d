//! Notification preferences, and the unsubscribe token a mail carries: the
//! user's id sealed (authenticated encryption with the service's secret
//! key) under a purpose, so it cannot be made for another user or taken
//! from another sealed value.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use keel_platform::crypto::SecretBox;
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{ColumnTrait, DbErr, QueryFilter};

use super::users;
use crate::entity::user;
use crate::identity::cache::SessionCache;

/// What the weekly goals unsubscribe token seals before the user id.
const PURPOSE: &str = "unsubscribe:weekly-goals:";

/// A token that is not one of ours, or names no user any more.
#[derive(Debug, thiserror::Error)]
#[error("This unsubscribe link is not valid")]
pub struct BadToken;

/// The unsubscribe token of `user_id` (safe in a URL path).
pub fn unsubscribe_token(secrets: &SecretBox, user_id: &str) -> String {
    let sealed = secrets.seal(format!("{PURPOSE}{user_id}").as_bytes());
    let raw = STANDARD.decode(sealed).unwrap_or_default();
    URL_SAFE_NO_PAD.encode(raw)
}

/// The user id a token was made for.
pub fn token_user(secrets: &SecretBox, token: &str) -> Result<String, BadToken> {
    let raw = URL_SAFE_NO_PAD.decode(token).map_err(|_| BadToken)?;
    let plain = secrets.open(&STANDARD.encode(raw)).map_err(|_| BadToken)?;
    let text = String::from_utf8(plain).map_err(|_| BadToken)?;
    text.strip_prefix(PURPOSE)
        .map(str::to_owned)
        .ok_or(BadToken)
}

/// Sets the weekly goals mail preference; a change counts in `__v`, the
/// same value changes nothing. Whether it changed.
pub async fn set_weekly_goals(
    db: &Db,
    cache: &SessionCache,
    user_id: &str,
    on: bool,
) -> Result<bool, DbErr> {
    let res = users::update(user_id)
        .col_expr(user::Column::NotifyWeeklyGoals, Expr::value(on))
        .filter(user::Column::NotifyWeeklyGoals.ne(on))
        .exec(db.write())
        .await?;
    if res.rows_affected > 0 {
        cache.user_changed(user_id).await;
    }
    Ok(res.rows_affected > 0)
}

/// Turns the weekly goals mail off for the user the token was made for.
pub async fn unsubscribe(
    db: &Db,
    cache: &SessionCache,
    secrets: &SecretBox,
    token: &str,
) -> Result<(), UnsubscribeError> {
    let user_id = token_user(secrets, token)?;
    set_weekly_goals(db, cache, &user_id, false).await?;
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum UnsubscribeError {
    #[error(transparent)]
    BadToken(#[from] BadToken),
    #[error(transparent)]
    Db(#[from] DbErr),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_user_and_nothing_else_opens() {
        let secrets = SecretBox::new(&[7; 32]);
        let t = unsubscribe_token(&secrets, "6b07b65cc2888c2bacb1c3e7");
        assert!(
            t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_eq!(
            token_user(&secrets, &t).ok().as_deref(),
            Some("6b07b65cc2888c2bacb1c3e7")
        );
        assert!(
            token_user(&SecretBox::new(&[8; 32]), &t).is_err(),
            "another key"
        );
        let mut forged = t.into_bytes();
        let last = forged.len() - 1;
        forged[last] = if forged[last] == b'A' { b'B' } else { b'A' };
        assert!(token_user(&secrets, &String::from_utf8(forged).unwrap_or_default()).is_err());
        let other = URL_SAFE_NO_PAD.encode(
            STANDARD
                .decode(secrets.seal(b"6b07b65cc2888c2bacb1c3e7"))
                .unwrap_or_default(),
        );
        assert!(
            token_user(&secrets, &other).is_err(),
            "a sealed value of another purpose"
        );
    }
}
