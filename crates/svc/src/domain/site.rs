//! Forms and submissions in the database (used by the routes and the CLI).

use chrono::Utc;
use keel_platform::db::Db;
use keel_platform::failure::Cause;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{
    ColumnTrait, DbErr, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use crate::domain::forms::{BadDefinition, FormDef, Values};
use crate::domain::hooks::{self, AppCheckVerified};
use crate::entity::{form, submission};

/// Why forms or submissions could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error(transparent)]
    BadDefinition(#[from] BadDefinition),
    /// What is stored cannot be read back as keel wrote it.
    #[error("a stored form or submission is broken: {0}")]
    Broken(#[source] Cause),
    #[error(transparent)]
    Db(#[from] DbErr),
}

fn broken(e: impl Into<Cause>) -> SiteError {
    SiteError::Broken(e.into())
}

fn to_def(row: form::Model) -> Result<FormDef, SiteError> {
    Ok(FormDef {
        fields: serde_json::from_str(&row.fields).map_err(broken)?,
        id: row.id,
        title: row.title,
    })
}

pub async fn get_form(db: &Db, id: &str) -> Result<Option<FormDef>, SiteError> {
    form::Entity::find_by_id(id)
        .one(db.read())
        .await?
        .map(to_def)
        .transpose()
}

pub async fn list_forms(db: &Db) -> Result<Vec<FormDef>, SiteError> {
    form::Entity::find()
        .order_by_asc(form::Column::Id)
        .all(db.read())
        .await?
        .into_iter()
        .map(to_def)
        .collect()
}

/// Creates or replaces a form definition (checked first).
pub async fn put_form(db: &Db, def: &FormDef) -> Result<(), SiteError> {
    def.check()?;
    let now = Utc::now();
    let fields = serde_json::to_string(&def.fields).map_err(broken)?;
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
pub async fn delete_form(db: &Db, id: &str) -> Result<bool, DbErr> {
    let txn = db.begin_write().await?;
    submission::Entity::delete_many()
        .filter(submission::Column::FormId.eq(id))
        .exec(&txn)
        .await?;
    let res = form::Entity::delete_by_id(id).exec(&txn).await?;
    txn.commit().await?;
    Ok(res.rows_affected > 0)
}

/// A submission to store, with the verified token it came with (its form
/// and app id are the token's).
#[derive(Debug, Clone)]
pub struct NewSubmission {
    pub values: Values,
    pub verified: AppCheckVerified,
}

/// Stores submissions, and the audit rows of their tokens, in one
/// transaction; their ids, in order.
pub async fn store_submissions(db: &Db, items: Vec<NewSubmission>) -> Result<Vec<i64>, SiteError> {
    let n = items.len();
    let now = Utc::now();
    let (values, verified): (Vec<Values>, Vec<AppCheckVerified>) =
        items.into_iter().map(|s| (s.values, s.verified)).unzip();
    let rows = values
        .into_iter()
        .zip(&verified)
        .map(|(values, v)| submission::ActiveModel {
            form_id: Set(v.form_id.clone()),
            field_values: Set(serde_json::Value::Object(values).to_string()),
            app_id: Set(v.app_id.clone()),
            created_at: Set(now),
            ..Default::default()
        });
    let txn = db.begin_write().await?;
    hooks::insert_audit(&txn, &verified).await?;
    let inserted = submission::Entity::insert_many(rows)
        .exec_with_returning(&txn)
        .await?;
    txn.commit().await?;
    // Ids are drawn in VALUES order; RETURNING's own order is not promised.
    let mut ids: Vec<i64> = inserted.into_iter().map(|r| r.id).collect();
    ids.sort_unstable();
    if ids.len() != n {
        return Err(broken(format!("stored {} of {n} submissions", ids.len())));
    }
    Ok(ids)
}

/// A page of submissions, newest first, and the total.
pub async fn submissions(
    db: &Db,
    form_id: &str,
    page: u64,
    per_page: u64,
) -> Result<(Vec<submission::Model>, u64), DbErr> {
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
) -> Result<Vec<submission::Model>, DbErr> {
    submission::Entity::find()
        .filter(submission::Column::FormId.eq(form_id))
        .filter(submission::Column::Id.gt(after))
        .order_by_asc(submission::Column::Id)
        .limit(limit)
        .all(db.read())
        .await
}

type FormEntries = std::collections::HashMap<String, (Option<FormDef>, std::time::Instant)>;

/// Form definitions read through a one-second cache (like the settings);
/// the process's own changes clear it at once.
#[derive(Clone)]
pub struct FormCache {
    db: Db,
    entries: std::sync::Arc<std::sync::RwLock<FormEntries>>,
}

impl FormCache {
    pub fn new(db: Db) -> Self {
        Self {
            db,
            entries: std::sync::Arc::default(),
        }
    }

    pub async fn get(&self, id: &str) -> Result<Option<FormDef>, SiteError> {
        let hit = self
            .entries
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .filter(|(_, at)| at.elapsed() < std::time::Duration::from_secs(1))
            .map(|(def, _)| def.clone());
        if let Some(def) = hit {
            return Ok(def);
        }
        let def = get_form(&self.db, id).await?;
        let mut entries = self
            .entries
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if entries.len() > 10_000 {
            entries.clear();
        }
        entries.insert(id.to_owned(), (def.clone(), std::time::Instant::now()));
        Ok(def)
    }

    pub fn forget(&self) {
        self.entries
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}
