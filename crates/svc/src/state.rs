//! What every svc handler shares.

use std::sync::Arc;

use keel_platform::Platform;
use keel_platform::db::Db;

use keel_platform::batch::Batcher;

use crate::appcheck::AppCheck;
use crate::config::Config;
use crate::hooks::AuditWriter;
use crate::push::devices::RegistrationWriter;
use crate::settings::SettingsStore;
use crate::site::{FormCache, NewSubmission};

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub platform: Platform,
    pub db: Db,
    pub cfg: Config,
    pub settings: SettingsStore,
    pub appcheck: AppCheck,
    /// Login password hash for unknown users (equal cost).
    pub dummy_hash: String,
    pub audit: AuditWriter,
    pub submissions: Batcher<NewSubmission, i64>,
    pub forms: FormCache,
    pub registrations: RegistrationWriter,
}

impl AppState {
    pub fn new(inner: Inner) -> Self {
        Self(Arc::new(inner))
    }
}

impl std::ops::Deref for AppState {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.0
    }
}
