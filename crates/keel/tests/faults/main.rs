//! The fault suite: keel under the failures an operator meets in
//! production, against the real binary: PostgreSQL cut under write load,
//! Redis cut and restored, SQLite's disk full, providers failing or
//! stalling, SIGKILL in the middle of writes, two nodes receiving the same
//! event, a rolling restart behind haproxy. Each test prints its figures (load, fault, acknowledged, lost,
//! time to recover); `scripts/test` shows them. docs/reliability.md
//! says what keel does for each dependency.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod disk;
mod haproxy;
mod harness;
mod kills;
mod load;
mod nodes;
mod partition;
mod postgres;
mod providers;
mod redis;
mod replay;
mod rolling;
mod stored;

pub const KEEL: &str = env!("CARGO_BIN_EXE_keel");
