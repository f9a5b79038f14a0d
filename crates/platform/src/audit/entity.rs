//! The `keel_audit` table.

use sea_orm::entity::prelude::*;

/// What someone did, once: who, what, on whom, when, from where, and the
/// state before and after (JSON text). Never a secret: a token appears as
/// its hash, a password not at all.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "keel_audit")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub at: DateTimeUtc,
    /// The service whose log it belongs to (`svc`, `accounts`, `operator`).
    pub service: String,
    /// Who: a username, an app id, `cli`.
    pub actor: String,
    /// What: a code such as `svc_form_created`.
    pub action: String,
    /// On whom or what: a user id, a form id, a send id.
    pub subject: Option<String>,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Anything else worth keeping (counts, a token's hash).
    pub detail: Option<String>,
    /// The client's address, when it came over HTTP.
    pub address: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
