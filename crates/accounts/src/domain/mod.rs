//! The accounts rules, callable without HTTP.

pub mod auth;
pub mod email;
pub mod fields;
pub mod goal_links;
pub mod goal_writer;
pub mod goals;
pub mod profile;
pub mod sessions;
pub mod two_factor;
pub mod users;
