//! SeaORM models of the console's tables.

pub mod operator;
pub mod session;

/// The console's tables, for `keel db copy`.
pub fn tables() -> Vec<keel_platform::migrate::spec::TableSpec> {
    use keel_platform::migrate::spec::TableSpec;
    vec![
        TableSpec::of::<operator::Entity>(),
        TableSpec::of::<session::Entity>(),
    ]
}
