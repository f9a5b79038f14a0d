//! What every svc handler shares.

use keel_platform::Platform;
use keel_platform::db::Db;

use keel_platform::batch::Batcher;

use crate::config::Config;
use crate::domain::appcheck::AppCheck;
use crate::domain::hooks::AuditWriter;
use crate::domain::push::devices::{DeviceReads, RegistrationWriter};
use crate::domain::settings::SettingsStore;
use crate::domain::site::{FormCache, NewSubmission};

pub type AppState = std::sync::Arc<Inner>;

pub struct Inner {
    pub platform: Platform,
    pub db: Db,
    pub cfg: Config,
    pub settings: SettingsStore,
    pub appcheck: AppCheck,
    pub audit: AuditWriter,
    pub submissions: Batcher<NewSubmission, i64>,
    pub forms: FormCache,
    pub registrations: RegistrationWriter,
    pub devices: DeviceReads,
}
