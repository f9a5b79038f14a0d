//! SeaORM models of the usage-alerts tables.

pub mod alert;
pub mod daily_total;
pub mod day_session;
pub mod delivery;
pub mod device;
pub mod event;
pub mod kinds;
pub mod preferences;

/// Every table of this component, for `keel db copy`.
pub fn tables() -> Vec<keel_platform::migrate::spec::TableSpec> {
    use keel_platform::migrate::spec::TableSpec;
    vec![
        TableSpec::of::<device::Entity>(),
        TableSpec::of::<preferences::Entity>(),
        TableSpec::of::<event::Entity>(),
        TableSpec::of::<daily_total::Entity>(),
        TableSpec::of::<day_session::Entity>(),
        TableSpec::of::<alert::Entity>(),
        TableSpec::of::<delivery::Entity>(),
    ]
}
