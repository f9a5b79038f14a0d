//! A copy of everything stored about a user that they may see: read in one
//! place so the export and its documentation stay together.

use keel_platform::db::Db;
use keel_platform::sea_orm::EntityTrait;

use super::goal_links::{self, YearlyWithWeekly};
use super::goals::{self, GoalError};
use super::passkeys;
use super::sessions;
use crate::entity::{email_change, passkey, session, user, weekly_goal};
use crate::id::UserId;

/// What the export holds, before it is written as JSON.
pub struct Export {
    pub sessions: Vec<session::Model>,
    pub weekly: Vec<weekly_goal::Model>,
    pub yearly: Vec<YearlyWithWeekly>,
    pub email_change: Option<email_change::Model>,
    pub passkeys: Vec<passkey::Model>,
}

/// Reads the user's sessions, goals, pending email change and passkeys.
pub async fn gather(db: &Db, u: &user::Model) -> Result<Export, GoalError> {
    let id = UserId::stored(u.id.as_str());
    let sessions = sessions::live(db.read(), &u.id).await?;
    let weekly = goals::list::<weekly_goal::Entity>(db, &id).await?;
    let yearly = goal_links::yearly_list(db, &id).await?;
    let email_change = email_change::Entity::find_by_id(u.id.as_str())
        .one(db.read())
        .await?;
    let passkeys = passkeys::list(db.read(), &u.id).await?;
    Ok(Export {
        passkeys,
        sessions,
        weekly,
        yearly,
        email_change,
    })
}
