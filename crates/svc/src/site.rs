//! Forms and submissions in the database (used by the routes and the CLI).

use axum::http::StatusCode;
use chrono::Utc;
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{
    ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use crate::entity::{form, submission};
use crate::error::Error;
use crate::forms::{FormDef, Values};

pub fn not_found() -> Error {
    Error::api(StatusCode::NOT_FOUND, "form_not_found", "Form not found")
}

fn to_def(row: form::Model) -> Result<FormDef, Error> {
    Ok(FormDef {
        fields: serde_json::from_str(&row.fields).map_err(|e| Error::Internal(e.to_string()))?,
        id: row.id,
        title: row.title,
    })
}

pub async fn get_form(db: &Db, id: &str) -> Result<Option<FormDef>, Error> {
    form::Entity::find_by_id(id)
        .one(db.read())
        .await?
        .map(to_def)
        .transpose()
}

pub async fn list_forms(db: &Db) -> Result<Vec<FormDef>, Error> {
    form::Entity::find()
        .order_by_asc(form::Column::Id)
        .all(db.read())
        .await?
        .into_iter()
        .map(to_def)
        .collect()
}

/// Creates or replaces a form definition (checked first).
pub async fn put_form(db: &Db, def: &FormDef) -> Result<(), Error> {
    def.check()?;
    let now = Utc::now();
    let fields = serde_json::to_string(&def.fields).map_err(|e| Error::Internal(e.to_string()))?;
    form::Entity::insert(form::ActiveModel {
        id: Set(def.id.clone()),
        title: Set(def.title.trim().to_owned()),
        fields: Set(fields),
        created_at: Set(now),
        updated_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(form::Column::Id)
            .update_columns([
                form::Column::Title,
                form::Column::Fields,
                form::Column::UpdatedAt,
            ])
            .to_owned(),
    )
    .exec_without_returning(db.write())
    .await?;
    Ok(())
}

/// Deletes a form and its submissions; false if there was none.
pub async fn delete_form(db: &Db, id: &str) -> Result<bool, Error> {
    let txn = db.begin_write().await?;
    submission::Entity::delete_many()
        .filter(submission::Column::FormId.eq(id))
        .exec(&txn)
        .await?;
    let res = form::Entity::delete_by_id(id).exec(&txn).await?;
    txn.commit().await?;
    Ok(res.rows_affected > 0)
}

pub async fn store_submission(
    db: &Db,
    form_id: &str,
    values: &Values,
    app_id: &str,
) -> Result<i64, Error> {
    let res = submission::Entity::insert(submission::ActiveModel {
        form_id: Set(form_id.to_owned()),
        field_values: Set(serde_json::Value::Object(values.clone()).to_string()),
        app_id: Set(app_id.to_owned()),
        created_at: Set(Utc::now()),
        ..Default::default()
    })
    .exec(db.write())
    .await?;
    Ok(res.last_insert_id)
}

/// A page of submissions, newest first, and the total.
pub async fn submissions(
    db: &Db,
    form_id: &str,
    page: u64,
    per_page: u64,
) -> Result<(Vec<submission::Model>, u64), Error> {
    let q = submission::Entity::find().filter(submission::Column::FormId.eq(form_id));
    let total = q.clone().count(db.read()).await?;
    let rows = q
        .order_by_desc(submission::Column::Id)
        .offset((page - 1) * per_page)
        .limit(per_page)
        .all(db.read())
        .await?;
    Ok((rows, total))
}

/// Submissions with ids above `after`, oldest first (for streaming exports).
pub async fn submissions_after(
    db: &Db,
    form_id: &str,
    after: i64,
    limit: u64,
) -> Result<Vec<submission::Model>, Error> {
    Ok(submission::Entity::find()
        .filter(submission::Column::FormId.eq(form_id))
        .filter(submission::Column::Id.gt(after))
        .order_by_asc(submission::Column::Id)
        .limit(limit)
        .all(db.read())
        .await?)
}
