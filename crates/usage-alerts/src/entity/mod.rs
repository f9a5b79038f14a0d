//! SeaORM models of the usage-alerts tables.

pub mod alert;
pub mod daily_total;
pub mod day_session;
pub mod delivery;
pub mod device;
pub mod event;
pub mod kinds;
pub mod preferences;
