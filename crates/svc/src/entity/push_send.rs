use keel_platform::sea_orm::entity::prelude::*;

/// A notification sent (or to be sent) to a set of devices.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "svc_push_sends")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub title: String,
    pub body: String,
    /// JSON object, if any.
    pub data: Option<String>,
    /// The target as given (JSON).
    pub target: String,
    pub send_at: DateTimeUtc,
    /// `HH:MM` in each device's time zone.
    pub local_time: Option<String>,
    pub recipients: i64,
    pub cancelled: bool,
    pub created_by: i64,
    pub created_at: DateTimeUtc,
    /// Its messages by status and receipt, kept by whatever changes them
    /// (`domain::push::counts`).
    pub n_pending: i64,
    pub n_queued: i64,
    pub n_sent: i64,
    pub n_failed: i64,
    pub n_cancelled: i64,
    pub n_skipped: i64,
    pub n_receipts_ok: i64,
    pub n_receipts_error: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
