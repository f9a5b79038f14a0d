//! What every usage-alerts handler shares.

use std::sync::Arc;

use keel_platform::db::Db;

use crate::auth::Identity;
use crate::config::Environment;
use crate::ingest::Ingestor;

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub db: Db,
    pub environment: Environment,
    pub identity: Identity,
    pub ingestor: Ingestor,
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
