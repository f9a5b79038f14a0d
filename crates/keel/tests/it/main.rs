//! Integration tests of the keel binary and its launch function: real
//! processes, real HTTP, SQLite or PostgreSQL (`KEEL_TEST_DATABASE_URL`).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod accounts_nodes;
mod accounts_weekly_mail;
mod architecture;
mod architecture_rules;
mod backup;
mod channel_processes;
mod cli;
mod console;
mod console_cli;
mod console_kit;
mod console_nodes;
mod console_svc;
mod console_users;
mod db_copy;
mod db_copy_refusals;
mod deploy_files;
mod error_shapes;
mod guard;
mod ltx_scan;
mod nul;
mod observability;
mod openapi_clients;
mod process;
mod provider_sdks;
mod push_common;
mod push_crash;
mod push_idempotency_nodes;
mod push_import_memory;
mod push_shared_rate;
mod replica_kit;
mod replication;
mod replication_erasure;
mod replication_lag;
mod replication_restore;
mod secrets;
mod services;
mod slow_requests;
mod startup;
mod svc_cli;
mod trace_secrets;
mod traces;
mod upgrade;

pub const KEEL: &str = env!("CARGO_BIN_EXE_keel");
