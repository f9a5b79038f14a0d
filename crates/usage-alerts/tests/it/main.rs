//! usage-alerts over real HTTP, on SQLite or PostgreSQL (`KEEL_TEST_DATABASE_URL`).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod helpers;

mod alerts;
mod apns_sdk;
mod auth;
mod devices;
mod events;
mod preferences;
mod schemathesis;
