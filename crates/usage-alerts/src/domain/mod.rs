//! What usage-alerts does, without HTTP.

pub mod account;
pub mod devices;
pub mod event;
pub mod ingest;
pub mod preferences;
pub mod thresholds;
pub mod values;
