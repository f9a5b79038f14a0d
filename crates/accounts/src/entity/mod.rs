//! SeaORM models of the accounts tables.

pub mod backup_code;
pub mod code_failure;
pub mod email_change;
pub mod email_verification;
pub mod passkey;
pub mod passkey_ceremony;
pub mod refresh_token;
pub mod session;
pub mod user;
pub mod weekly_goal;
pub mod yearly_goal;
