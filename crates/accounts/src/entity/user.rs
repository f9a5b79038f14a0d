use keel_platform::sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "accounts_users")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub username: String,
    /// Lower-cased username: unique.
    pub username_key: String,
    pub email: String,
    /// Lower-cased email: unique.
    pub email_key: String,
    pub slug: String,
    pub role: String,
    pub password_hash: String,
    pub two_factor: bool,
    /// Sealed base32 TOTP secret while two-factor is on.
    pub totp_secret: Option<String>,
    /// Sealed secret between POST and PUT /account/two-factor.
    pub totp_pending: Option<String>,
    /// The last TOTP time step accepted: a code works once.
    pub totp_last_step: i64,
    pub email_verified: bool,
    pub is_banned: bool,
    /// When a ban ends by itself (`None`: until lifted).
    pub banned_until: Option<DateTimeUtc>,
    pub streamer_mode: bool,
    pub notify_weekly_goals: bool,
    /// The ISO week (`2026-W48`) of the last weekly goals mail: one a week.
    pub weekly_mail_week: Option<String>,
    /// `__v`
    pub revision: i32,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::session::Entity")]
    Session,
}

impl Related<super::session::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Session.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// Whether the user is banned now (a ban with an end has not ended).
    pub fn banned_now(&self) -> bool {
        self.is_banned && self.banned_until.is_none_or(|t| t > chrono::Utc::now())
    }
}
