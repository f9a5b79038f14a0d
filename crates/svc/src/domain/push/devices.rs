//! Device registration: the push token is the credential.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use keel_platform::batch::Batcher;
use keel_platform::db::Db;
use keel_platform::db::grouped::GroupedReads;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QuerySelect, Set,
};
use keel_platform::tasks::Tasks;

use super::registration::Registration;
use crate::entity::push_device;

/// A registration waiting for the group commit.
pub struct NewRegistration {
    pub registration: Registration,
    pub app_id: String,
}

/// Registrations written together in one transaction (see
/// `keel_platform::batch`); answers, per registration, whether it created
/// the device. They are applied in arrival order, so a token registered
/// twice in one batch is created once.
pub type RegistrationWriter = Batcher<NewRegistration, bool>;

pub fn registration_writer(db: Db, tasks: &Tasks) -> RegistrationWriter {
    Batcher::start_with(
        tasks,
        "svc registrations",
        256,
        db,
        |db, items| async move { register_all(&db, items).await },
    )
}

/// Creates or updates (and reactivates) each device; true where created.
/// Two statements whatever the batch size: which tokens exist, then one
/// upsert. A token given twice keeps its last registration and counts as
/// created only the first time.
pub async fn register_all(db: &Db, items: Vec<NewRegistration>) -> Result<Vec<bool>, DbErr> {
    let now = Utc::now();
    let txn = db.begin_write().await?;
    let tokens: Vec<&str> = items
        .iter()
        .map(|i| i.registration.push_token.as_str())
        .collect();
    let existing: HashSet<String> = push_device::Entity::find()
        .select_only()
        .column(push_device::Column::PushToken)
        .filter(push_device::Column::PushToken.is_in(tokens))
        .into_tuple()
        .all(&txn)
        .await?
        .into_iter()
        .collect();
    let (created, rows) = plan(items, &existing, now);
    upsert(&txn, rows, AppId::Replace).await?;
    txn.commit().await?;
    Ok(created)
}

/// Per item whether it creates its device, and one row per token (its last
/// registration), in first-arrival order.
fn plan(
    items: Vec<NewRegistration>,
    existing: &HashSet<String>,
    now: DateTime<Utc>,
) -> (Vec<bool>, Vec<push_device::ActiveModel>) {
    let mut created = Vec::with_capacity(items.len());
    let mut slot: HashMap<String, usize> = HashMap::new();
    let mut rows: Vec<push_device::ActiveModel> = Vec::new();
    for item in items {
        let token = item.registration.push_token.clone();
        let row = row_of(item, now);
        match slot.get(&token) {
            Some(&i) => {
                created.push(false);
                rows[i] = row;
            }
            None => {
                created.push(!existing.contains(&token));
                slot.insert(token, rows.len());
                rows.push(row);
            }
        }
    }
    (created, rows)
}

fn row_of(item: NewRegistration, now: DateTime<Utc>) -> push_device::ActiveModel {
    item.registration
        .into_row(Status::Active, item.app_id, now, now)
}

/// Whether a stored device receives sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Active,
    /// Inactive, and why.
    Inactive(String),
}

impl Registration {
    /// The device's row.
    pub fn into_row(
        self,
        status: Status,
        app_id: String,
        registered_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
    ) -> push_device::ActiveModel {
        let (active, inactive_reason) = match status {
            Status::Active => (true, None),
            Status::Inactive(why) => (false, Some(why)),
        };
        push_device::ActiveModel {
            push_token: Set(self.push_token),
            device_type: Set(self.device_type),
            device_model: Set(self.device_model),
            os_version: Set(self.os_version),
            app_version: Set(self.app_version),
            locale: Set(self.locale),
            timezone: Set(self.timezone),
            user_label: Set(self.user_label),
            active: Set(active),
            inactive_reason: Set(inactive_reason),
            app_id: Set(app_id),
            registered_at: Set(registered_at),
            updated_at: Set(updated_at),
        }
    }
}

/// Writes `rows` by push token: new devices are inserted, known ones get
/// the row's values (their `app_id` too with `AppId::Replace`).
/// Registration and import both store devices through here.
pub async fn upsert<C: ConnectionTrait>(
    conn: &C,
    rows: Vec<push_device::ActiveModel>,
    app_id: AppId,
) -> Result<(), DbErr> {
    if rows.is_empty() {
        return Ok(());
    }
    use push_device::Column as C;
    let mut columns = vec![
        C::DeviceType,
        C::DeviceModel,
        C::OsVersion,
        C::AppVersion,
        C::Locale,
        C::Timezone,
        C::UserLabel,
        C::Active,
        C::InactiveReason,
        C::UpdatedAt,
    ];
    if app_id == AppId::Replace {
        columns.push(C::AppId);
    }
    push_device::Entity::insert_many(rows)
        .on_conflict(
            OnConflict::column(C::PushToken)
                .update_columns(columns)
                .to_owned(),
        )
        .exec_without_returning(conn)
        .await?;
    Ok(())
}

/// Whether an update of a known device takes the new row's app id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppId {
    /// A registration: the app that registered it now.
    Replace,
    /// An import: the device keeps the app it registered with.
    Keep,
}

/// Marks a device inactive; false if the token is unknown.
pub async fn deactivate(db: &Db, token: &str, reason: &str) -> Result<bool, DbErr> {
    use keel_platform::sea_orm::sea_query::Expr;
    use keel_platform::sea_orm::{ColumnTrait, QueryFilter};
    let res = push_device::Entity::update_many()
        .col_expr(push_device::Column::Active, Expr::value(false))
        .col_expr(push_device::Column::InactiveReason, Expr::value(reason))
        .col_expr(push_device::Column::UpdatedAt, Expr::value(Utc::now()))
        .filter(push_device::Column::PushToken.eq(token))
        .exec(db.write())
        .await?;
    Ok(res.rows_affected > 0)
}

/// (registered, active)
pub async fn status(reads: &DeviceReads, token: String) -> Result<(bool, bool), DbErr> {
    let d = reads.get(token).await?;
    Ok(d.map_or((false, false), |d| (true, d.active)))
}

/// Devices read by push token, concurrent reads grouped into one query on
/// PostgreSQL (see `keel_platform::db::grouped`).
pub type DeviceReads = GroupedReads<push_device::Entity, String>;

pub fn device_reads(db: &Db, tasks: &Tasks) -> DeviceReads {
    GroupedReads::start(
        db,
        tasks,
        "svc device reads",
        push_device::Column::PushToken,
        |d: &push_device::Model| &d.push_token,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(token: &str, version: &str) -> NewRegistration {
        NewRegistration {
            registration: Registration {
                push_token: token.to_owned(),
                device_type: "ios".to_owned(),
                device_model: None,
                os_version: None,
                app_version: Some(version.to_owned()),
                locale: None,
                timezone: None,
                user_label: None,
            },
            app_id: "app".to_owned(),
        }
    }

    #[test]
    fn a_token_twice_in_one_batch_is_created_once_and_keeps_its_last_registration() {
        let existing: HashSet<String> = ["known".to_owned()].into();
        let items = vec![
            reg("new", "1"),
            reg("known", "1"),
            reg("new", "2"),
            reg("other", "1"),
        ];
        let (created, rows) = plan(items, &existing, Utc::now());
        assert_eq!(created, vec![true, false, false, true]);
        let kept: Vec<(String, Option<String>)> = rows
            .into_iter()
            .map(|r| (r.push_token.unwrap(), r.app_version.unwrap()))
            .collect();
        assert_eq!(
            kept,
            vec![
                ("new".to_owned(), Some("2".to_owned())),
                ("known".to_owned(), Some("1".to_owned())),
                ("other".to_owned(), Some("1".to_owned())),
            ]
        );
    }
}
