//! What every svc handler shares.

use std::sync::Arc;

use keel_platform::Platform;
use keel_platform::db::Db;

use crate::appcheck::AppCheck;
use crate::config::Config;
use crate::settings::SettingsStore;

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
