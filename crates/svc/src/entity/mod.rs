//! SeaORM models of the svc tables.

pub mod app_password;
pub mod audit;
pub mod form;
pub mod session;
pub mod setting;
pub mod submission;
pub mod user;
