//! SeaORM models of the svc tables.

pub mod app_password;
pub mod audit;
pub mod form;
pub mod push_device;
pub mod push_idempotency_key;
pub mod push_message;
pub mod push_send;
pub mod session;
pub mod setting;
pub mod submission;
pub mod user;

/// Every table of this component, for `keel db copy`.
pub fn tables() -> Vec<keel_platform::migrate::spec::TableSpec> {
    use keel_platform::migrate::spec::TableSpec;
    vec![
        TableSpec::of::<setting::Entity>(),
        TableSpec::of::<user::Entity>(),
        TableSpec::of::<app_password::Entity>(),
        TableSpec::of::<session::Entity>(),
        TableSpec::of::<form::Entity>(),
        TableSpec::of::<submission::Entity>(),
        TableSpec::of::<audit::Entity>(),
        TableSpec::of::<push_device::Entity>(),
        TableSpec::of::<push_send::Entity>(),
        TableSpec::of::<push_message::Entity>(),
        TableSpec::of::<push_idempotency_key::Entity>(),
    ]
}
