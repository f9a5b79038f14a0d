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
    /// `pending`, `batched`, `sent` (ticket ok), `error` (ticket or request
    /// error), `cancelled`.
    pub status: String,
    pub batch_id: Option<String>,
    pub ticket_id: Option<String>,
    pub ticket_error: Option<String>,
    pub sent_at: Option<DateTimeUtc>,
    /// `ok` or `error` once the receipt is in.
    pub receipt_status: Option<String>,
    pub receipt_error: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
