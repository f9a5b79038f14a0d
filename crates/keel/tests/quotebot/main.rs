//! quotebot end to end: the real `keel quotebot` processes against real
//! PostgreSQL and Redis, with a fake Discord (REST and gateway) on
//! loopback. quotebot is PostgreSQL-only, so these run on PostgreSQL in
//! every pass.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod bot;
mod config;
mod console;
mod database;
mod discord_js;
mod harness;
mod health;
mod reconcile;
mod startup;
mod supervision;
