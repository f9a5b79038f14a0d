//! The push module: devices, sends and their progress, statistics, the
//! device list as CSV (exported in `transfer`, imported in `import`).

pub mod counts;
mod csv_in;
pub mod devices;
pub mod idempotency;
pub mod import;
mod import_rows;
pub mod progress;
pub mod registration;
pub mod request;
pub mod search;
pub mod send;
pub mod stats;
pub mod transfer;
