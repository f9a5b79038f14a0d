//! SeaORM models of the svc tables.

pub mod app_password;
pub mod audit;
pub mod form;
pub mod push_device;
pub mod push_idempotency_key;
pub mod push_message;
pub mod push_send;
pub mod session;
pub mod setting;
pub mod submission;
pub mod user;
