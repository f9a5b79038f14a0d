//! The weekly goals mail: once a week, each user who asked for it (and has
//! a verified address and no ban) gets a summary of their week. Exactly one
//! per user per week, however many nodes run the week and however often a
//! run is cut off: a user is marked with the week (`weekly_mail_week`) in
//! the same transaction that queues their mail, and only if not yet marked.

use chrono::{DateTime, Datelike, Duration, Utc};
use keel_platform::crypto::SecretBox;
use keel_platform::db::Db;
use keel_platform::mail::{self, Mail};
use keel_platform::sea_orm::sea_query::{Condition, Expr};
use keel_platform::sea_orm::{
    ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};

use super::notifications;
use super::weekly_mail_text::{self as words, App, Summary};
use crate::entity::{user, weekly_goal, yearly_goal};

/// Users read and mailed per transaction.
const PAGE: u64 = 200;
/// Yearly goals due within this many days are named in the mail.
const DUE_SOON_DAYS: i64 = 30;

/// What every mail of a run is made with.
pub struct Sender<'a> {
    pub db: &'a Db,
    pub secrets: &'a SecretBox,
    pub app: App<'a>,
    /// Where the service is reached from outside (unsubscribe links).
    pub public_url: &'a str,
}

/// The ISO week of `at`, as `2026-W48`: the mark of that week's mail.
pub fn week_of(at: DateTime<Utc>) -> String {
    let w = at.iso_week();
    format!("{}-W{:02}", w.year(), w.week())
}

/// Mails every user due this `week`; how many were mailed now. Pages go
/// through the users by id (the primary key), so each reads only its page.
pub async fn send_week(s: &Sender<'_>, week: &str, at: DateTime<Utc>) -> Result<u64, DbErr> {
    let mut sent = 0;
    let mut after = String::new();
    loop {
        let due = due_users(s.db, week, &after).await?;
        let Some(last) = due.last() else {
            return Ok(sent);
        };
        after.clone_from(&last.id);
        sent += send_page(s, week, at, &due).await?;
    }
}

fn not_this_week(week: &str) -> Condition {
    Condition::any()
        .add(user::Column::WeeklyMailWeek.is_null())
        .add(user::Column::WeeklyMailWeek.ne(week))
}

async fn due_users(db: &Db, week: &str, after: &str) -> Result<Vec<user::Model>, DbErr> {
    user::Entity::find()
        .filter(user::Column::Id.gt(after))
        .filter(user::Column::NotifyWeeklyGoals.eq(true))
        .filter(user::Column::EmailVerified.eq(true))
        .filter(
            keel_platform::sea_orm::Condition::any()
                .add(user::Column::IsBanned.eq(false))
                .add(user::Column::BannedUntil.lte(chrono::Utc::now())),
        )
        .filter(not_this_week(week))
        .order_by_asc(user::Column::Id)
        .limit(PAGE)
        .all(db.read())
        .await
}

async fn send_page(
    s: &Sender<'_>,
    week: &str,
    at: DateTime<Utc>,
    due: &[user::Model],
) -> Result<u64, DbErr> {
    let ids: Vec<&str> = due.iter().map(|u| u.id.as_str()).collect();
    let weekly = weekly_goal::Entity::find()
        .filter(weekly_goal::Column::UserId.is_in(ids.clone()))
        .filter(weekly_goal::Column::CreatedAt.gt(at - Duration::days(7)))
        .all(s.db.read())
        .await?;
    let yearly = yearly_goal::Entity::find()
        .filter(yearly_goal::Column::UserId.is_in(ids))
        .filter(yearly_goal::Column::IsCompleted.eq(false))
        .filter(yearly_goal::Column::CompleteBy.gte(at - Duration::days(1)))
        .filter(yearly_goal::Column::CompleteBy.lte(at + Duration::days(DUE_SOON_DAYS)))
        .order_by_asc(yearly_goal::Column::CompleteBy)
        .all(s.db.read())
        .await?;
    let txn = s.db.begin_write().await?;
    let mut sent = 0;
    for u in due {
        // Only the run that marks the user sends: the others see 0 rows.
        let marked = user::Entity::update_many()
            .col_expr(user::Column::WeeklyMailWeek, Expr::value(week))
            .filter(user::Column::Id.eq(u.id.as_str()))
            .filter(user::Column::NotifyWeeklyGoals.eq(true))
            .filter(not_this_week(week))
            .exec(&txn)
            .await?;
        if marked.rows_affected == 0 {
            continue;
        }
        let summary = Summary {
            completed: weekly
                .iter()
                .filter(|g| g.user_id == u.id && g.is_completed)
                .count(),
            open: weekly
                .iter()
                .filter(|g| g.user_id == u.id && !g.is_completed)
                .count(),
            due_soon: yearly.iter().filter(|g| g.user_id == u.id).collect(),
        };
        mail::enqueue(&txn, compose(s, u, &summary)).await?;
        sent += 1;
    }
    txn.commit().await?;
    Ok(sent)
}

fn compose(s: &Sender<'_>, u: &user::Model, w: &Summary<'_>) -> Mail {
    let token = notifications::unsubscribe_token(s.secrets, &u.id);
    let unsubscribe = format!("{}/notifications/unsubscribe/{token}", s.public_url);
    Mail {
        from_name: Some(s.app.name.to_owned()),
        to: u.email.clone(),
        subject: words::subject(s.app.name, w),
        text: words::text(&s.app, u, w, &unsubscribe),
        html: Some(words::html(&s.app, u, w, &unsubscribe)),
        headers: vec![
            ("List-Unsubscribe".to_owned(), format!("<{unsubscribe}>")),
            (
                "List-Unsubscribe-Post".to_owned(),
                "List-Unsubscribe=One-Click".to_owned(),
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_week_is_named_by_its_iso_year_and_number() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).map(|d| d.with_timezone(&Utc));
        assert_eq!(
            at("2026-11-23T08:00:00Z").map(week_of).ok().as_deref(),
            Some("2026-W48")
        );
        assert_eq!(
            at("2027-01-01T08:00:00Z").map(week_of).ok().as_deref(),
            Some("2026-W53")
        );
    }
}
