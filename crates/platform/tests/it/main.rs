//! Integration tests of the platform: real HTTP, real SQLite or PostgreSQL
//! (`KEEL_TEST_DATABASE_URL`), real Redis.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod cache;
mod grouped;
mod http;
mod inline;
mod jobs;
mod jwks;
mod mail;
mod migrate;
mod outbound;
mod short_pg;
