//! The usage-alerts jobs, one per file: its payload, retry policy and
//! handler together.

pub mod deliver_alert;
