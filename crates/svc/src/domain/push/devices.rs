//! Device registration: the push token is the credential.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use keel_platform::batch::Batcher;
use keel_platform::db::Db;
use keel_platform::db::grouped::GroupedReads;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QuerySelect, Set,
};
use keel_platform::tasks::Tasks;
use regex::Regex;
use serde_json::{Map, Value};

use crate::entity::push_device;
use crate::error::Error;

/// Invalid input: `rest_invalid_param` with `data.params` naming each field.
pub fn invalid(field: &str, problem: &str) -> Error {
    let mut params = Map::new();
    params.insert(field.to_owned(), Value::from(problem));
    Error::api(
        StatusCode::BAD_REQUEST,
        "rest_invalid_param",
        format!("Invalid parameter(s): {field}"),
    )
    .with("params", Value::Object(params))
}

pub fn missing(field: &str) -> Error {
    Error::api(
        StatusCode::BAD_REQUEST,
        "rest_missing_callback_param",
        format!("Missing parameter(s): {field}"),
    )
    .with("params", vec![field.to_owned()])
}

/// A push token shaped `<Name>PushToken[<opaque>]`, as the seed writes it
/// (`ProviderPushToken[...]`) and as Expo issues it (`ExponentPushToken[...]`,
/// `ExpoPushToken[...]`): a name of 1–32 letters and digits starting with a
/// letter, and an opaque part of 1–200 printable characters without spaces
/// or brackets. It is stored and handed to Expo exactly as given.
pub fn valid_push_token(t: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^[A-Za-z][A-Za-z0-9]{0,31}PushToken\[[!-Z\\^-~]{1,200}\]$").ok())
        .as_ref()
        .is_some_and(|re| re.is_match(t))
}

/// What a push token must look like, for error messages.
pub const PUSH_TOKEN_SHAPE: &str =
    "must look like <Name>PushToken[<opaque>], e.g. ExponentPushToken[...]";

/// A BCP 47 style tag: `en`, `en-US`, `pt_BR`, `zh-Hant-TW`.
pub fn valid_locale(l: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$").ok())
        .as_ref()
        .is_some_and(|re| l.len() <= 35 && re.is_match(l))
}

pub fn valid_timezone(tz: &str) -> bool {
    tz.parse::<chrono_tz::Tz>().is_ok()
}

/// A checked registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    pub push_token: String,
    pub device_type: String,
    pub device_model: Option<String>,
    pub os_version: Option<String>,
    pub app_version: Option<String>,
    pub locale: Option<String>,
    pub timezone: Option<String>,
    pub user_label: Option<String>,
}

fn text(body: &Map<String, Value>, field: &str, max: usize) -> Result<Option<String>, Error> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) if s.chars().count() <= max => Ok(Some(s.trim().to_owned())),
        Some(Value::String(_)) => Err(invalid(field, &format!("must be at most {max} characters"))),
        Some(_) => Err(invalid(field, "must be a string")),
    }
}

impl Registration {
    /// Checks a registration body (JSON object), naming the field at fault.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, Error> {
        let push_token = text(body, "push_token", 255)?.ok_or_else(|| missing("push_token"))?;
        if !valid_push_token(&push_token) {
            return Err(invalid("push_token", PUSH_TOKEN_SHAPE));
        }
        let device_type = text(body, "device_type", 16)?.ok_or_else(|| missing("device_type"))?;
        if device_type != "ios" && device_type != "android" {
            return Err(invalid("device_type", "must be ios or android"));
        }
        let locale = text(body, "locale", 35)?;
        if locale.as_deref().is_some_and(|l| !valid_locale(l)) {
            return Err(invalid("locale", "must be a locale tag such as en-US"));
        }
        let timezone = text(body, "timezone", 64)?;
        if timezone.as_deref().is_some_and(|t| !valid_timezone(t)) {
            return Err(invalid(
                "timezone",
                "must be an IANA time zone name such as Europe/Berlin",
            ));
        }
        Ok(Self {
            push_token,
            device_type,
            device_model: text(body, "device_model", 100)?,
            os_version: text(body, "os_version", 50)?,
            app_version: text(body, "app_version", 50)?,
            locale,
            timezone,
            user_label: text(body, "user_label", 255)?,
        })
    }
}

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
    Batcher::start(
        tasks,
        "svc registrations",
        256,
        move |items: Vec<NewRegistration>| {
            let db = db.clone();
            async move { register_all(&db, items).await }
        },
    )
}

/// Creates or updates (and reactivates) each device; true where created.
/// Two statements whatever the batch size: which tokens exist, then one
/// upsert. A token given twice keeps its last registration and counts as
/// created only the first time.
pub async fn register_all(db: &Db, items: Vec<NewRegistration>) -> Result<Vec<bool>, Error> {
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
pub async fn deactivate(db: &Db, token: &str, reason: &str) -> Result<bool, Error> {
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
pub async fn status(reads: &DeviceReads, token: String) -> Result<(bool, bool), Error> {
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

    #[test]
    fn token_locale_and_zone_shapes() {
        assert!(valid_push_token(
            "ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]"
        ));
        assert!(valid_push_token("ExpoPushToken[abc-DEF_123]"));
        assert!(
            valid_push_token("ProviderPushToken[abc]"),
            "the seed's own shape"
        );
        assert!(valid_push_token("FcmPushToken[a:b/c+d=.~]"));
        assert!(!valid_push_token("ExponentPushToken[]"));
        assert!(!valid_push_token("ExponentPushToken[a b]"));
        assert!(!valid_push_token("ExponentPushToken[a]b]"));
        assert!(!valid_push_token("ExponentPushToken[a\u{e9}]"));
        assert!(!valid_push_token("PushToken[abc]"));
        assert!(!valid_push_token("9PushToken[abc]"));
        assert!(!valid_push_token("Expo-PushToken[abc]"));
        assert!(!valid_push_token(&format!(
            "ExpoPushToken[{}]",
            "a".repeat(201)
        )));
        assert!(!valid_push_token("apns:abcdef"));
        for ok in ["en", "en-US", "pt_BR", "zh-Hant-TW"] {
            assert!(valid_locale(ok), "{ok}");
        }
        for bad in ["english", "e", "en-", "en US"] {
            assert!(!valid_locale(bad), "{bad}");
        }
        assert!(valid_timezone("Europe/Berlin") && valid_timezone("UTC"));
        assert!(!valid_timezone("Mars/Olympus"));
    }
}
