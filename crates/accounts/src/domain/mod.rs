//! The accounts rules, callable without HTTP.

pub mod auth;
pub mod deletion;
pub mod email;
pub mod export;
pub mod fields;
pub mod goal_links;
pub mod goal_writer;
pub mod goals;
pub mod invalid;
pub mod moderation;
pub mod notifications;
pub mod passkey_ceremonies;
pub mod passkey_sign_in;
pub mod passkeys;
pub mod profile;
pub mod proof;
pub mod sent;
pub mod sessions;
pub mod two_factor;
pub mod users;
pub mod weekly_mail;
pub mod weekly_mail_text;
