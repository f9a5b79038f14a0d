use keel_platform::sea_orm::entity::prelude::*;

/// One notification to one device within a send.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "svc_push_messages")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub send_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub push_token: String,
    pub due_at: DateTimeUtc,
    pub status: MessageStatus,
    pub batch_id: Option<String>,
    pub ticket_id: Option<String>,
    pub ticket_error: Option<String>,
    pub sent_at: Option<DateTimeUtc>,
    /// Set once the receipt is in.
    pub receipt_status: Option<ReceiptStatus>,
    pub receipt_error: Option<String>,
}

/// Where a message stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(16))")]
pub enum MessageStatus {
    /// Not yet due, or due and waiting for a batch.
    #[sea_orm(string_value = "pending")]
    Pending,
    /// In a batch on its way to Expo.
    #[sea_orm(string_value = "batched")]
    Batched,
    /// Accepted by Expo (ticket ok).
    #[sea_orm(string_value = "sent")]
    Sent,
    /// Refused (ticket error, or the request was).
    #[sea_orm(string_value = "error")]
    Error,
    #[sea_orm(string_value = "cancelled")]
    Cancelled,
    /// The device was no longer active when its batch went out.
    #[sea_orm(string_value = "skipped")]
    Skipped,
}

/// A delivery receipt's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(8))")]
pub enum ReceiptStatus {
    #[sea_orm(string_value = "ok")]
    Ok,
    #[sea_orm(string_value = "error")]
    Error,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
