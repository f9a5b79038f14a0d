//! SeaORM models of the accounts tables.

pub mod backup_code;
pub mod code_failure;
pub mod email_change;
pub mod email_verification;
pub mod passkey;
pub mod passkey_ceremony;
pub mod refresh_token;
pub mod session;
pub mod user;
pub mod weekly_goal;
pub mod yearly_goal;

/// Every table of this component, for `keel db copy`.
pub fn tables() -> Vec<keel_platform::migrate::spec::TableSpec> {
    use keel_platform::migrate::spec::TableSpec;
    vec![
        TableSpec::of::<user::Entity>(),
        TableSpec::of::<session::Entity>(),
        TableSpec::of::<refresh_token::Entity>(),
        TableSpec::of::<backup_code::Entity>(),
        TableSpec::of::<code_failure::Entity>(),
        TableSpec::of::<email_change::Entity>(),
        TableSpec::of::<email_verification::Entity>(),
        TableSpec::of::<passkey::Entity>(),
        TableSpec::of::<passkey_ceremony::Entity>(),
        TableSpec::of::<yearly_goal::Entity>(),
        TableSpec::of::<weekly_goal::Entity>(),
    ]
}
