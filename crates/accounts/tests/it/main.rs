//! accounts over real HTTP, on SQLite or PostgreSQL (`KEEL_TEST_DATABASE_URL`).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod helpers;
mod passkey_helpers;

mod account;
mod auth;
mod bodies;
mod deletion;
mod email;
mod erasure;
mod export;
mod goal_links;
mod goals;
mod mail_dkim;
mod no_store;
mod passkey_framing;
mod passkey_refusals;
mod passkeys;
mod passwords;
mod schemathesis;
mod sessions;
mod tokens;
mod two_factor;
mod weekly_mail;
