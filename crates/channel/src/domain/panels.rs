//! The info panels under the player: created, edited, deleted, reordered.

use chrono::Utc;
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::Expr;
use keel_platform::sea_orm::{
    ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, IntoActiveModel, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::values::{WebUrl, clearable_url, clearable_url_schema, optional_url_schema};
use crate::entity::panel;
use keel_platform::values::{NotBlank, Text, Trimmed};

/// At most this many panels.
pub const MAX_PANELS: usize = 50;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Panel {
    pub id: String,
    /// 0-based display order.
    pub position: i32,
    pub title: String,
    pub body: String,
    pub link_url: Option<String>,
    pub image_url: Option<String>,
}

impl From<panel::Model> for Panel {
    fn from(p: panel::Model) -> Self {
        Self {
            id: p.id,
            position: p.position,
            title: p.title,
            body: p.body,
            link_url: p.link_url,
            image_url: p.image_url,
        }
    }
}

/// Why a panel change was refused.
#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    #[error("no panel {0}")]
    NotFound(String),
    #[error("at most {MAX_PANELS} panels")]
    TooMany,
    #[error("ids must name every panel exactly once")]
    NotAPermutation,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Every panel, in display order.
pub async fn list(db: &Db) -> Result<Vec<Panel>, DbErr> {
    Ok(panel::Entity::find()
        .order_by_asc(panel::Column::Position)
        .order_by_asc(panel::Column::CreatedAt)
        .all(db.read())
        .await?
        .into_iter()
        .map(Panel::from)
        .collect())
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewPanel {
    #[schema(inline)]
    pub title: Text<80, NotBlank>,
    #[serde(default)]
    #[schema(inline)]
    pub body: Option<Text<5000, Trimmed>>,
    #[schema(schema_with = optional_url_schema)]
    pub link_url: Option<WebUrl>,
    #[schema(schema_with = optional_url_schema)]
    pub image_url: Option<WebUrl>,
}

/// Adds a panel at the end.
pub async fn create(db: &Db, p: NewPanel) -> Result<Panel, PanelError> {
    let txn = db.begin_write().await?;
    let positions: Vec<i32> = panel::Entity::find()
        .select_only()
        .column(panel::Column::Position)
        .into_tuple()
        .all(&txn)
        .await?;
    if positions.len() >= MAX_PANELS {
        return Err(PanelError::TooMany);
    }
    let now = Utc::now();
    let row = panel::ActiveModel {
        id: Set(uuid::Uuid::now_v7().to_string()),
        position: Set(positions.iter().max().map_or(0, |m| m + 1)),
        title: Set(p.title.into_string()),
        body: Set(p.body.map(Text::into_string).unwrap_or_default()),
        link_url: Set(p.link_url.map(WebUrl::into_string)),
        image_url: Set(p.image_url.map(WebUrl::into_string)),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    Ok(row.into())
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PanelUpdate {
    pub id: String,
    #[schema(inline)]
    pub title: Option<Text<80, NotBlank>>,
    #[schema(inline)]
    pub body: Option<Text<5000, Trimmed>>,
    /// `null` or `""` removes the link.
    #[serde(default, deserialize_with = "clearable_url")]
    #[schema(schema_with = clearable_url_schema)]
    pub link_url: Option<Option<WebUrl>>,
    /// `null` or `""` removes the image.
    #[serde(default, deserialize_with = "clearable_url")]
    #[schema(schema_with = clearable_url_schema)]
    pub image_url: Option<Option<WebUrl>>,
}

/// Changes the given fields of a panel.
pub async fn update(db: &Db, u: PanelUpdate) -> Result<Panel, PanelError> {
    let mut row = panel::Entity::find_by_id(u.id.as_str())
        .one(db.read())
        .await?
        .ok_or_else(|| PanelError::NotFound(u.id.clone()))?
        .into_active_model();
    if let Some(t) = u.title {
        row.title = Set(t.into_string());
    }
    if let Some(b) = u.body {
        row.body = Set(b.into_string());
    }
    if let Some(l) = u.link_url {
        row.link_url = Set(l.map(WebUrl::into_string));
    }
    if let Some(i) = u.image_url {
        row.image_url = Set(i.map(WebUrl::into_string));
    }
    row.updated_at = Set(Utc::now());
    Ok(row.update(db.write()).await?.into())
}

pub async fn delete(db: &Db, id: &str) -> Result<(), PanelError> {
    let res = panel::Entity::delete_by_id(id).exec(db.write()).await?;
    if res.rows_affected == 0 {
        return Err(PanelError::NotFound(id.to_owned()));
    }
    Ok(())
}

/// Puts the panels in the order of `ids`, which must name each exactly
/// once; one transaction.
pub async fn reorder(db: &Db, ids: &[String]) -> Result<Vec<Panel>, PanelError> {
    let txn = db.begin_write().await?;
    let mut have: Vec<String> = panel::Entity::find()
        .select_only()
        .column(panel::Column::Id)
        .into_tuple()
        .all(&txn)
        .await?;
    let mut want = ids.to_vec();
    have.sort();
    want.sort();
    if have != want {
        return Err(PanelError::NotAPermutation);
    }
    let now = Utc::now();
    for (i, id) in ids.iter().enumerate() {
        panel::Entity::update_many()
            .col_expr(
                panel::Column::Position,
                Expr::value(i32::try_from(i).unwrap_or(i32::MAX)),
            )
            .col_expr(panel::Column::UpdatedAt, Expr::value(now))
            .filter(panel::Column::Id.eq(id.as_str()))
            .exec(&txn)
            .await?;
    }
    txn.commit().await?;
    list(db).await.map_err(PanelError::from)
}
