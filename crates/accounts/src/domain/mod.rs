//! The accounts rules, callable without HTTP.

pub mod auth;
pub mod deletion;
pub mod email;
pub mod export;
pub mod fields;
pub mod goal_links;
pub mod goal_writer;
pub mod goals;
pub mod notifications;
pub mod profile;
pub mod sessions;
pub mod two_factor;
pub mod users;
pub mod weekly_mail;
pub mod weekly_mail_text;
