use keel_platform::sea_orm::entity::prelude::*;

/// A signed-in operator's session: its cookie and its CSRF token, both
/// kept as SHA-256 only.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "keel_operator_sessions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub token_hash: String,
    pub operator_id: i64,
    pub csrf_hash: String,
    pub created_at: DateTimeUtc,
    pub expires_at: DateTimeUtc,
    pub address: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::operator::Entity",
        from = "Column::OperatorId",
        to = "super::operator::Column::Id"
    )]
    Operator,
}

impl Related<super::operator::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Operator.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
