//! keel's platform: what every service shares.
//!
//! - [`config`]: typed configuration from the environment and `keel.toml`
//! - [`db`], [`migrate`]: the SeaORM store (SQLite or PostgreSQL) and its migrations
//! - [`http`]: the layers and launch function of every listener
//! - [`jobs`], [`mail`]: the durable job queue and the mail outbox on it
//! - [`cache`]: cache and rate limits, in-process or Redis
//! - [`guard`]: the one guard of every credential check
//! - [`outbound`], [`jwks`]: outbound HTTP and JWKS-backed JWT verification
//! - [`observe`]: each I/O call timed and traced by one wrapper (the ground floor)
//! - [`telemetry`]: logs and metrics

pub mod audit;
pub mod batch;
pub mod cache;
pub mod check;
pub mod config;
pub mod console;
pub mod copy;
pub mod crypto;
pub mod csv_out;
pub mod db;
pub mod dkim;
pub mod failure;
pub mod guard;
pub mod http;
pub mod jobs;
pub mod jwks;
pub mod mail;
pub mod migrate;
pub mod observe;
pub mod outage;
pub mod outbound;
pub mod password;
pub mod schema;
pub mod service;
pub mod signals;
pub mod tasks;
pub mod telemetry;
pub mod time;
pub mod totp;
pub mod values;

mod context;

pub use context::{Platform, StartError};

// Re-exported so service crates use the same versions.
pub use sea_orm;
pub use utoipa;
pub use utoipa_axum;
