//! channel-api and channel-web over real HTTP, on SQLite or PostgreSQL
//! (`KEEL_TEST_DATABASE_URL`).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod helpers;

mod analytics;
mod auth;
mod emotes;
mod logo;
mod notify;
mod panels;
mod schemathesis;
mod setup;
mod stream;
mod trpc;
mod trpc_client;
mod web_assets;
mod web_pages;
mod web_proxy;
mod webhook;
