//! A user's threshold preferences.

use chrono::{DateTime, Utc};
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{DbErr, EntityTrait, Set};
use keel_platform::time::millis;
use serde::Serialize;
use utoipa::ToSchema;

use super::thresholds::ThresholdConfig;
use crate::entity::preferences;

/// UserPreferences, as GET and POST /preferences carry them.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserPreferences {
    pub user_id: String,
    pub thresholds: Vec<ThresholdConfig>,
    #[serde(with = "millis")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: DateTime<Utc>,
}

impl From<preferences::Model> for UserPreferences {
    fn from(p: preferences::Model) -> Self {
        Self {
            thresholds: serde_json::from_str(&p.thresholds).unwrap_or_default(),
            user_id: p.user_id,
            updated_at: p.updated_at,
        }
    }
}

/// The user's preferences, if any were configured.
pub async fn get(db: &Db, user_id: &str) -> Result<Option<UserPreferences>, DbErr> {
    Ok(db
        .one_short(preferences::Entity::find_by_id(user_id))
        .await?
        .map(UserPreferences::from))
}

/// Replaces the user's thresholds; what is stored now.
pub async fn save(
    db: &Db,
    user_id: &str,
    thresholds: Vec<ThresholdConfig>,
) -> Result<UserPreferences, DbErr> {
    let now = Utc::now();
    let json = serde_json::to_string(&thresholds).map_err(|e| DbErr::Json(e.to_string()))?;
    let row = preferences::ActiveModel {
        user_id: Set(user_id.to_owned()),
        thresholds: Set(json),
        updated_at: Set(now),
    };
    preferences::Entity::insert(row)
        .on_conflict(
            OnConflict::column(preferences::Column::UserId)
                .update_columns([
                    preferences::Column::Thresholds,
                    preferences::Column::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(db.write())
        .await?;
    Ok(UserPreferences {
        user_id: user_id.to_owned(),
        thresholds,
        updated_at: now,
    })
}
