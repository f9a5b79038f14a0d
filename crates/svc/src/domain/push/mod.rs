//! The push module: devices, sends and their progress, statistics, the
//! device list as CSV.

pub mod counts;
pub mod devices;
pub mod idempotency;
pub mod progress;
pub mod registration;
pub mod request;
pub mod search;
pub mod send;
pub mod stats;
pub mod transfer;
