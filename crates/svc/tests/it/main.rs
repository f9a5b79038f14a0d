//! svc over real HTTP, on SQLite or PostgreSQL (`KEEL_TEST_DATABASE_URL`).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod helpers;

mod admin;
mod admins;
mod app_passwords;
mod appcheck;
mod console_routes;
mod cors;
mod form_bodies;
mod push_admin;
mod push_console_api;
mod push_idempotency;
mod push_kit;
mod push_receipts;
mod push_register;
mod push_schedule;
mod push_sdk;
mod push_send;
mod push_transfer;
mod schemathesis;
mod session_cookie;
mod submit;
