use keel_platform::sea_orm::entity::prelude::*;

/// An admin's `Idempotency-Key` on `POST /send`, within its scope (whose
/// key it is: `user:<svc user id>` or `operator:<operator id>`): the send
/// it made, what the request asked (a SHA-256 of its canonical form) and
/// the status the first answer gave. Kept 24 hours.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "svc_push_idempotency_keys")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub scope: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub idempotency_key: String,
    pub fingerprint: String,
    pub send_id: String,
    pub status: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
